// What a user reads of the API beyond its schema, written by the module that owns it: each annotation's and label's
// documentation beside its key (a trigger's spec module documents its own annotations; the API reference's
// "Annotations and labels" section is rendered from it by hack/apidocs; a thunk, so a text may quote a bound its
// module defines further down), and the shape of a `kubectl cron why` cause a trigger's spec module brings.

/** What an annotation or label is: where it goes, who sets it, its format and its meaning (markdown). */
export interface MetadataDoc {
  /** The objects that carry it. */
  on: string;
  setBy: string;
  format: string;
  meaning: string;
}

const docs = new Map<string, () => MetadataDoc>();

/** An annotation or label key of the API, with its documentation: returns the key. */
export function documentedKey<K extends string>(key: K, doc: () => MetadataDoc): K {
  docs.set(key, doc);
  return key;
}

/** The documentation of a key documentedKey registered; undefined for any other. */
export function metadataDocOf(key: string): MetadataDoc | undefined {
  return docs.get(key)?.();
}

/**
 * A cause of `kubectl cron why` as a trigger's spec module writes it (a row of cmd/kubectl-cron/answer/causes.ts CAUSES):
 * its id, what happened, how it is detected, and the verdict and fix said with the facts the plugin found.
 */
export interface WhyCause {
  readonly id: string;
  readonly title: string;
  readonly detect: string;
  readonly verdict: (p: never) => string;
  readonly fix: (p: never) => string[];
  readonly alert?: string;
}
