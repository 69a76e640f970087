import type { MarkerCode } from './markers.js';
import type { ReexportIndex } from './reexports.js';
import type { SiteKind } from './site-kinds.js';
import type { Transform } from './transforms/types.js';

/** How one file is run: the transforms, what runs after them, and what they may assume. */
export interface FileRunOptions {
  transforms: readonly Transform[];
  /** Run after the transforms when the file changed (marker checks, import clean-up). */
  finishing: readonly Transform[];
  noTodos: boolean;
  reexports: ReexportIndex;
}

/** A site a transform rewrote or marked, at an offset of the text of `round`. */
export interface PendingRow {
  round: number;
  offset: number;
  transform: string;
  code: MarkerCode | 'rewritten';
  kind: SiteKind;
  message: string;
}
