-- An application's own first migration, beside Turnstile's V1 (its own history table).
CREATE TABLE app_things (id INTEGER NOT NULL PRIMARY KEY);
