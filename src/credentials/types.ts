/** A credential key's change, by fingerprint only (never a value). */
export interface CredentialKeyChange {
  group: string;
  key: string;
  /** First 12 hex digits of sha256 of the value; null when the key is absent on that side. */
  before: string | null;
  after: string | null;
}
