CREATE TABLE t (id int, v text);
INSERT INTO t VALUES (1, 'a');
