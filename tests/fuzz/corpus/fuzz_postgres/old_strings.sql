SET standard_conforming_strings = off;
CREATE TABLE t (a text, b bytea);
INSERT INTO t VALUES ('a\\b\n''c', '\\x00ff');
SET standard_conforming_strings TO 'on';
INSERT INTO t VALUES ('a\b', '\001\\');
