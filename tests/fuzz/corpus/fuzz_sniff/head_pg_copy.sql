--
-- PostgreSQL database dump
--

\restrict MbHuDwvQ81cfvkT2GKjRclnHrKVsshblp9cPHGjbpq5xYKxovHhdc2cgFr7z8Pi

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: hostile_fn(); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.hostile_fn() RETURNS text
    LANGUAGE sql
    AS $_$
  SELECT '-- MySQL dump; /*!40101 SET NAMES latin1 */; PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; COPY t FROM stdin; C:\dir\ -- $$ $tag$ \.'::text
$_$;


ALTER FUNCTION public.hostile_fn() OWNER TO postgres;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: hostile; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.hostile (
    id integer NOT NULL,
    note text DEFAULT '-- MySQL dump; /*!40101 SET NAMES latin1 */; PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; COPY t FROM stdin; C:\dir\'::text NOT NULL,
    v text,
    i bigint,
    d numeric(20,6),
    f double precision,
    flag boolean,
    bin bytea,
    ts timestamp without time zone
);


ALTER TABLE public.hostile OWNER TO postgres;

--
-- Name: TABLE hostile; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON TABLE public.hostile IS '-- MySQL dump; /*!40101 SET NAMES latin1 */; PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; COPY t FROM stdin; C:\dir\';


--
-- Data for Name: hostile; Type: TABLE DATA; Schema: public; Owner: postgres
--

COPY public.hostile (id, note, v, i, d, f, flag, bin, ts) FROM stdin;
1	mysql conditional comment	/*!40101 SET NAMES latin1 */	0	0.000000	0.1	t	\\x00275c0a0d22ff	2024-01-02 03:04:05
2	mysql header	-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)	1	-1.500000	-2.5e-10	f	\\x	1970-01-01 00:00:00
3	mariadb header	-- MariaDB dump 10.19  Distrib 10.11.6-MariaDB	-1	12345678901234.567890	1.5	\N	\N	\N
4	mariadb sandbox	/*M!999999\\- enable the sandbox mode */	9223372036854775807	0.000001	0.30000000000000004	t	\\x5c4e	2038-01-19 03:14:07
5	mysql preamble lines	/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;\nLOCK TABLES `t` WRITE;	-9223372036854775808	\N	\N	f	\\x5c783431	9999-12-31 23:59:59
6	mysql trailer	-- Dump completed on 2024-01-02  3:04:05	42	99999999999999.999999	1e+100	\N	\\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff	2000-02-29 12:00:00
7	pg header	--\n-- PostgreSQL database dump\n--\n	\N	7.250000	123456.789	t	\\x505241474d4120666f726569676e5f6b6579733d4f46463b0a	2024-01-02 03:04:05
8	pg trailer	-- PostgreSQL database dump complete	0	0.000000	0.1	f	\\x00275c0a0d22ff	1970-01-01 00:00:00
9	pg preamble	SET standard_conforming_strings = on;\nSELECT pg_catalog.set_config('search_path', '', false);	1	-1.500000	-2.5e-10	\N	\\x	\N
10	pg nonstd	SET standard_conforming_strings = off;	-1	12345678901234.567890	1.5	t	\N	2038-01-19 03:14:07
11	restrict	\\restrict AbC123xyz	9223372036854775807	0.000001	0.30000000000000004	f	\\x5c4e	9999-12-31 23:59:59
12	restrict mid line	before\n\\restrict AbC123xyz\nafter	-9223372036854775808	\N	\N	\N	\\x5c783431	2000-02-29 12:00:00
13	copy header	COPY public.t (a, b) FROM stdin;	42	99999999999999.999999	1e+100	t	\\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff	2024-01-02 03:04:05
14	copy end alone	\\.	\N	7.250000	123456.789	f	\\x505241474d4120666f726569676e5f6b6579733d4f46463b0a	1970-01-01 00:00:00
15	copy end on a line	line1\n\\.\nline3	0	0.000000	0.1	\N	\\x00275c0a0d22ff	\N
16	sqlite preamble	PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;	1	-1.500000	-2.5e-10	t	\\x	2038-01-19 03:14:07
17	sqlite begin	BEGIN TRANSACTION;	-1	12345678901234.567890	1.5	f	\N	9999-12-31 23:59:59
18	sqlite commit	COMMIT;	9223372036854775807	0.000001	0.30000000000000004	\N	\\x5c4e	2000-02-29 12:00:00
19	delimiter	DELIMITER ;;	-9223372036854775808	\N	\N	t	\\x5c783431	2024-01-02 03:04:05
20	backslash start	\\starts with a backslash	42	99999999999999.999999	1e+100	f	\\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff	1970-01-01 00:00:00
21	backslash end	ends with a backslash\\	\N	7.250000	123456.789	\N	\\x505241474d4120666f726569676e5f6b6579733d4f46463b0a	\N
22	backslash middle	mid\\dle	0	0.000000	0.1	t	\\x00275c0a0d22ff	2038-01-19 03:14:07
23	backslash doubled	doubl