// A journal too large for its token is kept in the store; the sealed header then carries this
// reference instead (the runtime writes it, the inspector reads it).

/** Where a spilled journal is, and the digest of its text: what the token carries instead of it. */
export interface SpillRef {
  sp: string;
  h: string;
}

/** Whether sealed state data is a reference to a spilled journal. */
export const isSpillRef = (v: unknown): v is SpillRef => typeof v === "object" && v !== null && typeof (v as SpillRef).sp === "string" && typeof (v as SpillRef).h === "string";
