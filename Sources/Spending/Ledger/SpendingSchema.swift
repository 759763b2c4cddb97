import EventualAPI
import EventualKit
import GRDB

/// SpendiQ's tables in the user's database. Append only: a shipped migration is never edited.
enum SpendingSchema {
    static let accountsTable = "spending_accounts"
    static let transactionsTable = "spending_transactions"
    static let limitsTable = "spending_limits"

    /// Write a person's changes to the synced tables, and the server's.
    static let accounts = RecordTable<SpendingAccount>(table: accountsTable)
    static let transactions = RecordTable<SpendingTransaction>(table: transactionsTable)
    static let limits = RecordTable<SpendingLimit>(table: limitsTable)

    static let migrations: [LocalMigration] = [
        LocalMigration("spending-1-ledger") { db in
            // NB: defaults on every column: a pulled record may arrive before a field a pending local edit holds back.
            try db.execute(sql: """
                CREATE TABLE spending_accounts (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL DEFAULT '',
                    kind TEXT NOT NULL DEFAULT 'cash',
                    currency TEXT NOT NULL DEFAULT 'EUR',
                    colour TEXT,
                    openingBalanceMinor INTEGER NOT NULL DEFAULT 0,
                    archived INTEGER NOT NULL DEFAULT 0,
                    createdAt INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE spending_transactions (
                    id TEXT PRIMARY KEY NOT NULL,
                    accountId TEXT NOT NULL DEFAULT '',
                    kind TEXT NOT NULL DEFAULT 'expense',
                    amountMinor INTEGER NOT NULL DEFAULT 0,
                    currency TEXT NOT NULL DEFAULT 'EUR',
                    category TEXT,
                    note TEXT,
                    occurredAt INTEGER NOT NULL DEFAULT 0,
                    place TEXT,
                    latitude REAL,
                    longitude REAL,
                    automatic INTEGER NOT NULL DEFAULT 0,
                    toAccountId TEXT
                );
                -- The dashboard reads a time range; balances sum per account (both from the index alone).
                CREATE INDEX spending_transactions_by_time ON spending_transactions (occurredAt, kind, currency, amountMinor, category);
                CREATE INDEX spending_transactions_by_account ON spending_transactions (accountId, kind, amountMinor);
                CREATE INDEX spending_transactions_by_target ON spending_transactions (toAccountId, amountMinor) WHERE toAccountId IS NOT NULL;
                -- Budgets, on this device only: checked at each write.
                CREATE TABLE spending_limits (
                    period TEXT NOT NULL,
                    category TEXT NOT NULL DEFAULT '',
                    currency TEXT NOT NULL,
                    amountMinor INTEGER NOT NULL,
                    PRIMARY KEY (period, category, currency)
                );
                -- The last position (one row), and when it was last queued for the server.
                CREATE TABLE spending_position (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    latitude REAL NOT NULL,
                    longitude REAL NOT NULL,
                    savedAt INTEGER NOT NULL,
                    queuedAt INTEGER
                );
                """)
        },
        LocalMigration("spending-2-synced-limits") { db in
            // NB: budgets sync now, one record each; the device-only ones wait in the old table
            // until `Limits.adoptDeviceLimits()` queues them (a migration cannot write the outbox).
            try db.execute(sql: """
                ALTER TABLE spending_limits RENAME TO spending_device_limits;
                CREATE TABLE spending_limits (
                    id TEXT PRIMARY KEY NOT NULL,
                    period TEXT NOT NULL DEFAULT 'monthly',
                    category TEXT NOT NULL DEFAULT '',
                    currency TEXT NOT NULL DEFAULT 'EUR',
                    amountMinor INTEGER NOT NULL DEFAULT 0
                );
                """)
        },
        LocalMigration("spending-3-spaces") { db in
            // The space an account or transaction is in (NULL: the person's own) and who changed it
            // last; the mirrors write both.
            try db.execute(sql: """
                ALTER TABLE spending_accounts ADD COLUMN space_id TEXT;
                ALTER TABLE spending_accounts ADD COLUMN changed_by TEXT;
                ALTER TABLE spending_transactions ADD COLUMN space_id TEXT;
                ALTER TABLE spending_transactions ADD COLUMN changed_by TEXT;
                CREATE INDEX spending_accounts_by_space ON spending_accounts (space_id) WHERE space_id IS NOT NULL;
                CREATE INDEX spending_transactions_by_space ON spending_transactions (space_id) WHERE space_id IS NOT NULL;
                """)
        },
        LocalMigration("spending-4-shares") { db in
            // Whom each space made to share accounts was offered to, and as what: a pending
            // invitee is in no members' list yet, and a second share with them reuses the space.
            try db.execute(sql: """
                CREATE TABLE spending_shares (
                    space_id TEXT PRIMARY KEY NOT NULL,
                    invitee TEXT NOT NULL,
                    role TEXT NOT NULL,
                    sharedAt INTEGER NOT NULL
                );
                """)
        },
        LocalMigration("spending-5-receipts") { db in
            // A transaction's receipt: an attachment's reference (`sha256:<digest>`), its file in the person's attachments folder.
            try db.execute(sql: "ALTER TABLE spending_transactions ADD COLUMN receipt TEXT")
        },
        LocalMigration("spending-6-transfer-legs") { db in
            // The two sides of a transfer between spaces (see `TransferLeg`); balances read the side from the index.
            try db.execute(sql: """
                ALTER TABLE spending_transactions ADD COLUMN leg TEXT;
                ALTER TABLE spending_transactions ADD COLUMN linkId TEXT;
                DROP INDEX spending_transactions_by_account;
                DROP INDEX spending_transactions_by_target;
                CREATE INDEX spending_transactions_by_account ON spending_transactions (accountId, kind, leg, amountMinor);
                CREATE INDEX spending_transactions_by_target ON spending_transactions (toAccountId, leg, amountMinor) WHERE toAccountId IS NOT NULL;
                CREATE INDEX spending_transactions_by_link ON spending_transactions (linkId) WHERE linkId IS NOT NULL;
                """)
        },
    ]
}
