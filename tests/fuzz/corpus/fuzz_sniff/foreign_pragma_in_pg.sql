SET standard_conforming_strings = on;
PRAGMA foreign_keys=OFF;
