-- 0001: foundation. Extensions and helpers every later migration relies on.
-- gen_random_uuid() is built in since PostgreSQL 13; pgcrypto is not needed.

-- Refuses UPDATE, DELETE and TRUNCATE on tables that must only grow (used by later migrations).
CREATE OR REPLACE FUNCTION countersign_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% on % is not allowed: the table is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

-- Service metadata (key/value), e.g. the instance id shown in /readyz.
CREATE TABLE service_info (
    key        text PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO service_info (key, value) VALUES ('instance_id', gen_random_uuid()::text);
