// Private keys (supplement §12.2): metadata only ever comes back; key material leaves the server only as an export
// file, which the page downloads without showing it.
import { api, call } from "../../../api/client";
import { certificates as certRules } from "../../../api/rules.gen";
import type { ExportedFile, KeyAlgorithm, ListQuery, PrivateKey } from "../../../api/types";

export const KEYS_KEY = "private-keys";
export type KeyExportFormat = (typeof certRules.KEY_EXPORT_FORMATS)[number];

const path = (id: string) => ({ path: { key_id: id } });

export const keysApi = {
  list: (query: ListQuery) => call(api.GET("/api/certificates/private_keys", { params: { query } })),
  get: (id: string) => call(api.GET("/api/certificates/private_keys/{key_id}", { params: path(id) })),
  create: (body: { keyName: string; alg: KeyAlgorithm; passphrase?: string; tagIds: string[] }): Promise<PrivateKey> =>
    call(api.POST("/api/certificates/private_keys", { body })),
  /** `newPassphrase`: a string sets or changes the passphrase, null removes it; `passphrase` is the current one. */
  update: (id: string, body: { keyName?: string; tagIds?: string[]; passphrase?: string; newPassphrase?: string | null }) =>
    call(api.PUT("/api/certificates/private_keys/{key_id}", { params: path(id), body })),
  remove: (id: string) => call(api.DELETE("/api/certificates/private_keys/{key_id}", { params: path(id) })),
  export: (id: string, body: { format: KeyExportFormat; passphrase?: string; exportPassphrase?: string }): Promise<ExportedFile> =>
    call(api.POST("/api/certificates/private_keys/{key_id}/_export", { params: path(id), body })),
};

export const { MAX_PASSPHRASE, NAME_MAX: KEY_NAME_MAX } = certRules;
export const keyNameRule = (v: string) =>
  v.trim() === "" ? "Enter a name" : [...v.trim()].length > KEY_NAME_MAX ? `At most ${KEY_NAME_MAX} characters` : null;
export const passphraseRule = (v: string) => ([...v].length > MAX_PASSPHRASE ? `At most ${MAX_PASSPHRASE} characters` : null);

export type { PrivateKey };
