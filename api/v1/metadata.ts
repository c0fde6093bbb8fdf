// The documentation of each annotation and label api/v1 defines, written beside its key by the module that owns it
// (a trigger's spec module documents its own annotations): the API reference's "Annotations and labels" section is
// rendered from it (hack/apidocs). A thunk, so a text may quote a bound its module defines further down.

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
