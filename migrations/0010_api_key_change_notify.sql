-- Servers may cache successful API-key look-ups (AUTH_CACHE_SECONDS). Every change of api_keys
-- (a revocation, or a deletion by hand) is announced on the channel countersign_api_keys, so
-- every server empties its cache as soon as the change commits (NOTIFY is delivered at commit).
CREATE FUNCTION countersign_notify_api_keys_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('countersign_api_keys', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_notify_api_keys_changed();
