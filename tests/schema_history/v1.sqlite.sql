BEGIN TRANSACTION;
CREATE TABLE event_dates (
            date TEXT NOT NULL,
            event_id TEXT NOT NULL REFERENCES events (id),
            PRIMARY KEY (date, event_id)
        ) WITHOUT ROWID;
INSERT INTO "event_dates" VALUES('2026-11-30','00000000-0000-4000-8000-000000000004');
INSERT INTO "event_dates" VALUES('2026-12-05','00000000-0000-4000-8000-000000000001');
INSERT INTO "event_dates" VALUES('2026-12-10','00000000-0000-4000-8000-000000000002');
INSERT INTO "event_dates" VALUES('2026-12-17','00000000-0000-4000-8000-000000000002');
INSERT INTO "event_dates" VALUES('2027-01-07','00000000-0000-4000-8000-000000000002');
INSERT INTO "event_dates" VALUES('2027-02-01','00000000-0000-4000-8000-000000000004');
CREATE TABLE events (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            location TEXT NOT NULL,
            description TEXT NOT NULL,
            dates TEXT NOT NULL,
            price REAL NOT NULL,
            cancelled INTEGER NOT NULL DEFAULT 0
        );
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000001','Night at the museum','East wing','Night at the museum, as the museum''s programme says.','["2026-12-05"]',12.5,0);
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000002','Printmaking workshop','East wing','Printmaking workshop, as the museum''s programme says.','["2026-12-10", "2026-12-17", "2027-01-07"]',12.5,0);
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000003','Restorers at work','East wing','Restorers at work, as the museum''s programme says.','["2026-12-12", "2026-12-13"]',12.5,1);
INSERT INTO "events" VALUES('00000000-0000-4000-8000-000000000004','Winter lectures','East wing','Winter lectures, as the museum''s programme says.','["2026-11-30", "2027-02-01"]',12.5,0);
CREATE TABLE idempotency_keys (
            user TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            ticket_id TEXT NOT NULL REFERENCES tickets (id),
            PRIMARY KEY (user, key)
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
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000001','general','2026-12-01',NULL,'ticket-general-000001-00001','visitor1@example.org','+44 20 7946 0000','2026-11-24T18:57:31.315Z');
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000002','event','2026-12-17','00000000-0000-4000-8000-000000000002','ticket-event-000002-00002','visitor2@example.org',NULL,'2026-11-24T18:57:31.316Z');
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000003','event','2026-12-12','00000000-0000-4000-8000-000000000003','ticket-event-000003-00003','visitor3@example.org','+44 20 7946 0000','2026-11-24T18:57:31.316Z');
INSERT INTO "tickets" VALUES('00000000-0000-4000-9000-000000000004','event','2026-12-05','00000000-0000-4000-8000-000000000001','ticket-event-000004-00004','visitor4@example.org',NULL,'2026-11-24T18:57:31.317Z');
CREATE INDEX tickets_by_event ON tickets (event_id);
COMMIT;
PRAGMA user_version = 1;
