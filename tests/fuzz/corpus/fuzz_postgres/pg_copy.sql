--
-- PostgreSQL database dump
--

\restrict aVHpsWvejB96FfM9Qe9TRgWkXlmlnTJiYaTQCdfGtQaFQcws0NGqgeYtenmurOA

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
-- Name: app; Type: SCHEMA; Schema: -; Owner: postgres
--

CREATE SCHEMA app;


ALTER SCHEMA app OWNER TO postgres;

--
-- Name: noisy(); Type: FUNCTION; Schema: public; Owner: postgres
--

CREATE FUNCTION public.noisy() RETURNS text
    LANGUAGE plpgsql
    AS $_$
BEGIN
  -- COPY public.follows (follower_id) FROM stdin;
  INSERT INTO follows VALUES ('fn', 'body', now());
  RETURN 'it''s; $a$ a function';
END;
$_$;


ALTER FUNCTION public.noisy() OWNER TO postgres;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: Edge List; Type: TABLE; Schema: app; Owner: postgres
--

CREATE TABLE app."Edge List" (
    "Src" text NOT NULL,
    "dst Col" text NOT NULL,
    weight integer
);


ALTER TABLE app."Edge List" OWNER TO postgres;

--
-- Name: empty_t; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.empty_t (
    a integer
);


ALTER TABLE public.empty_t OWNER TO postgres;

--
-- Name: follows; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.follows (
    follower_id text NOT NULL,
    followee_id text NOT NULL,
    created_at timestamp with time zone
);


ALTER TABLE public.follows OWNER TO postgres;

--
-- Name: samples; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.samples (
    id integer NOT NULL,
    txt text,
    small smallint,
    big bigint,
    amount numeric(20,6),
    ratio double precision,
    r4 real,
    flag boolean,
    created timestamp without time zone,
    stamped timestamp with time zone,
    day date,
    label character varying(40) DEFAULT ''::character varying NOT NULL,
    data bytea,
    doc jsonb
);


ALTER TABLE public.samples OWNER TO postgres;

--
-- Name: TABLE samples; Type: COMMENT; Schema: public; Owner: postgres
--

COMMENT ON TABLE public.samples IS 'has ''quotes''; and semicolons';


--
-- Data for Name: Edge List; Type: TABLE DATA; Schema: app; Owner: postgres
--

COPY app."Edge List" ("Src", "dst Col", weight) FROM stdin;
a	b	1
a"q	c'd	\N
x\\y	tab\tz	-3
\.


--
-- Data for Name: empty_t; Type: TABLE DATA; Schema: public; Owner: postgres
--

COPY public.empty_t (a) FROM stdin;
\.


--
-- Data for Name: follows; Type: TABLE DATA; Schema: public; Owner: postgres
--

COPY public.follows (follower_id, followee_id, created_at) FROM stdin;
alice	bob	2024-06-20 16:13:20+00
alice	carol	2024-06-20 16:15:00+00
dave	bob	2024-06-20 16:16:40+00
\.


--
-- Data for Name: samples; Type: TABLE DATA; Schema: public; Owner: postgres
--

COPY public.samples (id, txt, small, big, amount, ratio, r4, flag, created, stamped, day, label, data, doc) FROM stdin;
1	it's "quoted"	-32768	9223372036854775807	12345678901234.567890	1.5	0.25	t	2024-01-02 03:04:05	2024-06-30 21:59:59+00	2024-02-29	quotes	\\x00ff	{"a": "b"}
2	back\\slash \\\\ double and \\N inside	32767	-9223372036854775808	-0.000001	-2.5e-10	-1.5	f	1970-01-01 00:00:00	1970-01-01 00:00:01+00	0001-01-01	backslash	\\x00275c0a0d1a22ff08	[1, 2]
3	\\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	literal \\N	\N	\N
4	tab\there\r\nCRLF\nLF\rCR	0	0	0.000000	0	0	\N	2038-01-19 03:14:07.123456	2038-01-19 08:44:07.5+00	infinity	tab\tcrlf	\\x	\N
5	日本語テキスト 🎉😀	1	1	1.000001	1e+300	3.4e+38	t	2024-01-02 03:04:05	\N	\N	ユニコード 😀	\\xe697a5	{"jp": "日本"}
6		\N	\N	\N	\N	\N	\N	\N	\N	\N		\\x	\N
7	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	null	\N	\N
9	bs\b ff\f vt\v pct% und_ sq' dq" semi; $$dollar$$ \\. end	-1	-1	-99999999999999.999999	-0.5	-0.5	f	\N	\N	\N	/* not a comment */ -- nor this	\\x2f2a	\N
\.


--
-- Name: follows follows_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.follows
    ADD CONSTRAINT follows_pkey PRIMARY KEY (follower_id, followee_id);


--
-- Name: samples samples_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.samples
    ADD CONSTRAINT samples_pkey PRIMARY KEY (id);


--
-- PostgreSQL database dump complete
--

\unrestrict aVHpsWvejB96FfM9Qe9TRgWkXlmlnTJiYaTQCdfGtQaFQcws0NGqgeYtenmurOA

