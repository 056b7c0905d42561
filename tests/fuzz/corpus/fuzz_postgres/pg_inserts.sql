--
-- PostgreSQL database dump
--

\restrict 5bAJAh3lTvG8QmWjvXarTc78beyIB3XEAHrCMtQjOYtqxKfxeg4Nf5ZQJnkAuFE

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

INSERT INTO app."Edge List" VALUES ('a', 'b', 1);
INSERT INTO app."Edge List" VALUES ('a"q', 'c''d', NULL);
INSERT INTO app."Edge List" VALUES ('x\y', 'tab	z', -3);


--
-- Data for Name: empty_t; Type: TABLE DATA; Schema: public; Owner: postgres
--



--
-- Data for Name: follows; Type: TABLE DATA; Schema: public; Owner: postgres
--

INSERT INTO public.follows VALUES ('alice', 'bob', '2024-06-20 16:13:20+00');
INSERT INTO public.follows VALUES ('alice', 'carol', '2024-06-20 16:15:00+00');
INSERT INTO public.follows VALUES ('dave', 'bob', '2024-06-20 16:16:40+00');


--
-- Data for Name: samples; Type: TABLE DATA; Schema: public; Owner: postgres
--

INSERT INTO public.samples VALUES (1, 'it''s "quoted"', -32768, 9223372036854775807, 12345678901234.567890, 1.5, 0.25, true, '2024-01-02 03:04:05', '2024-06-30 21:59:59+00', '2024-02-29', 'quotes', '\x00ff', '{"a": "b"}');
INSERT INTO public.samples VALUES (2, 'back\slash \\ double and \N inside', 32767, -9223372036854775808, -0.000001, -2.5e-10, -1.5, false, '1970-01-01 00:00:00', '1970-01-01 00:00:01+00', '0001-01-01', 'backslash', '\x00275c0a0d1a22ff08', '[1, 2]');
INSERT INTO public.samples VALUES (3, '\N', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'literal \N', NULL, NULL);
INSERT INTO public.samples VALUES (4, 'tab	here
CRLF
LFCR', 0, 0, 0.000000, 0, 0, NULL, '2038-01-19 03:14:07.123456', '2038-01-19 08:44:07.5+00', 'infinity', 'tab	crlf', '\x', NULL);
INSERT INTO public.samples VALUES (5, '日本語テキスト 🎉😀', 1, 1, 1.000001, 1e+300, 3.4e+38, true, '2024-01-02 03:04:05', NULL, NULL, 'ユニコード 😀', '\xe697a5', '{"jp": "日本"}');
INSERT INTO public.samples VALUES (6, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '', '\x', NULL);
INSERT INTO public.samples VALUES (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'null', NULL, NULL);
INSERT INTO public.samples VALUES (9, 'bs ff vt pct% und_ sq'' dq" semi; $$dollar$$ \. end', -1, -1, -99999999999999.999999, -0.5, -0.5, false, NULL, NULL, NULL, '/* not a comment */ -- nor this', '\x2f2a', NULL);
', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '100k', NULL, NULL);


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

\unrestrict 5bAJAh3lTvG8QmWjvXarTc78beyIB3XEAHrCMtQjOYtqxKfxeg4Nf5ZQJnkAuFE

