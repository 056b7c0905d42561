CREATE TABLE t (a integer, b bytea, c text);
COPY t (a, b, c) FROM stdin;
1	\\x00ff	\N
2	\N	a\tb\101\x41
\.
INSERT INTO t VALUES (3, '\x00', E'\u00e9\n'), (4, NULL, $$x$$), (5, NULL, 'a'::text);
CREATE FUNCTION f() RETURNS int AS $b$ select 1; $b$ LANGUAGE sql;
\connect x
