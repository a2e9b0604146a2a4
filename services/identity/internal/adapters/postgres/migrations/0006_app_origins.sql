-- Browser origins (CORS) an operator allowed for an app beyond its redirect URIs' origins,
-- normalised (scheme://host[:port]) and sorted by the domain. An array beside redirect_uris: the
-- list is small, always read whole with the app, and changes under the app row's lock together
-- with its identity.app.changed event.
alter table apps add column extra_origins text[] not null default '{}';
