-- Run once by the postgres image when it initialises an empty data volume (docker-entrypoint-initdb.d),
-- as the image's superuser, which Countersign itself never uses.
--
-- `countersign` owns the database and everything `countersign migrate` creates in it; CREATEROLE
-- lets migrate create the runtime role `countersign_app` (RUNTIME_ROLE_PASSWORD in compose.yaml)
-- and set its password. Neither role is a superuser. Change the password here and in compose.yaml.
CREATE ROLE countersign LOGIN CREATEROLE PASSWORD 'countersign-owner-change-me';
CREATE DATABASE countersign OWNER countersign;
