/** What the suite's order test needs of the jest sequencer (./testSequencer.cjs). */
interface OrderedTest {
  readonly path: string;
}

declare class ArtifactsLastSequencer {
  constructor(options: { contexts: readonly unknown[] });
  sort<T extends OrderedTest>(tests: readonly T[]): T[];
}

export = ArtifactsLastSequencer;
