PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE "t" ([a] INTEGER, `b` TEXT, c BLOB);
INSERT INTO t VALUES(1,replace(replace('a\r\nb','\r',char(13)),'\n',char(10)),X'00ff');
INSERT INTO t VALUES(2,unistr('\u00e9'),NULL);
INSERT INTO t VALUES(3,char(65,66),x'');
COMMIT;
