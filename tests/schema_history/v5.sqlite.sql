BEGIN TRANSACTION;
CREATE TABLE admissions (
            ticket_id TEXT PRIMARY KEY REFERENCES tickets (id),
            admitted_at TEXT NOT NULL,
            admitted_by TEXT NOT NULL
        ) WITHOUT ROWID;
INSERT INTO "admissions" VALUES('00000000-0000-4000-9000-000000000001','2026-12-01T09:30:00Z','gate');
CREATE TABLE event_changes (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            version INTEGER NOT NULL
        );
INSERT INTO "event_changes" VALUES(1,5);
CREATE TABLE event_dates (
            date TEXT NOT NULL,
            event_id TEXT NOT NULL REFERENCES events (id), name TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (date, event_id)
        ) WITHOUT ROWID;
INSERT INTO "event_dates" VALUES('2026-11-30','00000000-0000-4000-8000-000000000004','Winter lectures');
INSERT INTO "event_dates" VALUES('2026-12-05','00000000-0000-4000-8000-000000000001','Night at the museum');
INSERT INTO "event_dates" VALUES('2026-12-10','00000000-0000-4000-8000-000000000002','Printmaking workshop');
INSERT INTO "event_dates" VALUES('2026-12-17','00000000-0000-4000-8000-000000000002','Printmaking workshop');
INSERT INTO "event_dates" VALUES('2027-01-07','00000000-0000-4000-8000-000000000002','Printmaking workshop');
INSERT INTO "event_dates" VALUES('2027-02-01','00000000-0000-4000-8000-000000000004','Winter lectures');
CREATE TABLE events (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            location TEXT NOT NULL,
            description TEXT NOT NULL,
            dates TEXT NOT NULL,
            price REAL NOT NULL,
            cancelled INTEGER NOT NULL DEFAULT 0
        , last_date TEXT);
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000001','Night at the museum','East wing','Night at the museum, as the museum''s programme says.','["2026-12-05"]',12.5,0,'2026-12-05');
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000002','Printmaking workshop','East wing','Printmaking workshop, as the museum''s programme says.','["2026-12-10", "2026-12-17", "2027-01-07"]',12.5,0,'2027-01-07');
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000003','Restorers at work','East wing','Restorers at work, as the museum''s programme says.','["2026-12-12", "2026-12-13"]',12.5,1,'2026-12-13');
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000004','Winter lectures','East wing','Winter lectures, as the museum''s programme says.','["2026-11-30", "2027-02-01"]',12.5,0,'2027-02-01');
CREATE TABLE "idempotency_keys" (
            user_name TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            ticket_id TEXT NOT NULL REFERENCES tickets (id) DEFERRABLE INITIALLY DEFERRED,
            PRIMARY KEY (user_name, key)
        ) WITHOUT ROWID;
INSERT INTO "idempotency_keys" VALUES('visitor','key-1','fingerprint-1','00000000-0000-4000-9000-000000000001');
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO "settings" VALUES('qr_secret','fake-secret-of-a-test-fixture');
CREATE TABLE tickets (
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL CHECK (type IN ('general', 'event')),
            date TEXT NOT NULL,
            event_id TEXT REFERENCES events (id),
            confirmation_code TEXT NOT NULL UNIQUE,
            email TEXT NOT NULL,
            phone TEXT,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000001','general','2026-12-01',NULL,'ticket-general-000001-00001','visitor1@example.org','+44 20 7946 0000','2026-11-24T18:57:33.995Z');
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000002','event','2026-12-17','00000000-0000-4000-8000-000000000002','ticket-event-000002-00002','visitor2@example.org',NULL,'2026-11-24T18:57:33.996Z');
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000003','event','2026-12-12','00000000-0000-4000-8000-000000000003','ticket-event-000003-00003','visitor3@example.org','+44 20 7946 0000','2026-11-24T18:57:33.996Z');
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000004','event','2026-12-05','00000000-0000-4000-8000-000000000001','ticket-event-000004-00004','visitor4@example.org',NULL,'2026-11-24T18:57:33.997Z');
CREATE INDEX tickets_by_date ON tickets (date, event_id);
CREATE INDEX tickets_by_event ON tickets (event_id, date);
CREATE INDEX event_dates_in_order ON event_dates (date, name, event_id);
CREATE INDEX event_dates_by_event ON event_dates (event_id, date);
CREATE INDEX events_by_last_date ON events (last_date, cancelled);
COMMIT;
PRAGMA user_version = 5;
