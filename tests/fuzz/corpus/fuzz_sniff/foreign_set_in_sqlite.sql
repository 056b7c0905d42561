PRAGMA foreign_keys=OFF;
SET x = 1;
