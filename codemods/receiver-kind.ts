/** What a receiver is, as far as the codemod can prove it: an SDK Client, an SDK server, or neither/unknown. */
export type ReceiverKind = 'client' | 'server' | 'other';

/** What the type checker said about one file: receiver kinds and method values, each keyed by expression text. */
export interface TypedFileFacts {
  receivers: ReadonlyMap<string, ReceiverKind>;
  methods: ReadonlyMap<string, string>;
}
