-- MySQL dump
COPY t (a) FROM stdin;
x
\.
