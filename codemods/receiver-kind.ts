/** What a receiver is, as far as the codemod can prove it: an SDK Client, an SDK server, or neither/unknown. */
export type ReceiverKind = 'client' | 'server' | 'other';
