-- Certificates (supplement §12): private keys and certificate templates. Tags go through entity_tags
-- (entity types "privateKey" and "certificateTemplate"); template shares live in `shares`.

-- key_enc: the key blob sealed with the master key (AES-256-GCM, additional data = key id). Inside: PKCS#8 DER, or
-- an EncryptedPrivateKeyInfo DER (PBES2) when `encrypted` = 1. `alg` is the §12.1 JSON object.
CREATE TABLE private_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  alg TEXT NOT NULL,
  encrypted INTEGER NOT NULL,
  key_enc BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (user_id, name)
);

-- attributes: the normalized §12.3 JSON object.
CREATE TABLE certificate_templates (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  attributes TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (user_id, name)
);
