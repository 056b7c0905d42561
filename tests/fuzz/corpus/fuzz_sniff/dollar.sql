CREATE FUNCTION f() RETURNS text AS $b$ SELECT '-- MySQL dump' $b$;
COPY t (a) FROM stdin;
x
\.
