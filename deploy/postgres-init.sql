-- One database per bounded context on the compose Postgres server.
CREATE DATABASE berth_identity;
CREATE DATABASE berth_tenant;
CREATE DATABASE berth_analytics;
CREATE DATABASE berth_billing;
CREATE DATABASE berth_webhook;
CREATE DATABASE berth_outbound;
