PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE samples (
  id INTEGER PRIMARY KEY,
  txt MEDIUMTEXT,
  big INTEGER,
  amount NUMERIC,
  ratio REAL,
  flag BOOLEAN,
  created TIMESTAMP,
  label VARCHAR(40) NOT NULL DEFAULT '',
  data BLOB
);
INSERT INTO samples VALUES(1,'it''s "quoted"',9223372036854775807,12345.5,1.5,1,'2024-01-02 03:04:05','quotes',X'00ff');
INSERT INTO samples VALUES(2,'back\slash \\ double and \N inside',-9223372036854775808,-0.25,-2.5000000000000001556e-10,0,'2024-06-30T23:59:59+02:00','backslash',X'00275c0a0d1a22ff08');
INSERT INTO samples VALUES(3,'\N',NULL,NULL,NULL,NULL,NULL,'literal \N',NULL);
INSERT INTO samples VALUES(4,replace(replace('tab	here\r\nCRLF\nLF\rCR','\r',char(13)),'\n',char(10)),0,0,0.0,NULL,NULL,'tab	crlf',X'');
INSERT INTO samples VALUES(5,'日本語テキスト 🎉😀',1,1,1.0000000000000000047e+300,1,NULL,'ユニコード 😀',X'e697a5');
INSERT INTO samples VALUES(6,'',NULL,NULL,NULL,NULL,NULL,'',X'');
INSERT INTO samples VALUES(7,NULL,NULL,NULL,NULL,NULL,NULL,'null',NULL);
INSERT INTO samples VALUES(9,'bs pct% und_ sq'' dq" semi; paren) comma,',-1,-1,-0.5,0,NULL,'/* not a comment */ -- nor this',X'2f2a');
CREATE TABLE IF NOT EXISTS "follows" ("follower_id" TEXT NOT NULL, [followee_id] TEXT NOT NULL, `created_at` INTEGER,
  PRIMARY KEY (follower_id, followee_id));
INSERT INTO follows VALUES('alice','bob',1718900000);
INSERT INTO follows VALUES('alice','carol',1718900100);
INSERT INTO follows VALUES('dave','bob',1718900200);
CREATE INDEX follows_rev ON follows (followee_id);
CREATE VIEW v AS SELECT * FROM follows WHERE follower_id <> 'x;y';
CREATE TRIGGER t_ai AFTER INSERT ON follows BEGIN UPDATE samples SET label = 'a;b' WHERE id = 0; END;
COMMIT;
