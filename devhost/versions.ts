/**
 * The releases the devhost's parity with the real host was recorded against
 * (devhost/docs/real-host.md#versions). The devhost speaks private protocols of two libraries the app
 * loads — the `@azure/functions-core` contract of `@azure/functions` and the out-of-process payloads
 * of `durable-functions` — so it says at start which versions it was checked with, and warns when the
 * app loads others: a minor release of either can change the ground under it.
 */
export const recordedWith = {
  host: '4.1037.0',
  nodeWorker: '3.9.1',
  durableExtension: '3.19.0',
  libraries: { '@azure/functions': '4.16.5', 'durable-functions': '3.5.0' },
} as const;

export type Library = keyof typeof recordedWith.libraries;

export const libraries = Object.keys(recordedWith.libraries) as Library[];

/** The start-up line, and a warning for each library the app loads at another version (absent ones are not mentioned). */
export function versionReport(installed: Readonly<Record<Library, string | undefined>>): { line: string; warnings: string[] } {
  const recorded = recordedWith.libraries;
  const line =
    `Parity recorded against Functions host ${recordedWith.host} (Node worker ${recordedWith.nodeWorker}, ` +
    `Durable extension ${recordedWith.durableExtension}) with ${libraries.map((name) => `${name} ${recorded[name]}`).join(' and ')}`;
  const warnings = libraries.flatMap((name) => {
    const version = installed[name];
    if (version === undefined || version === recorded[name]) return [];
    return [
      `The app loads ${name} ${version}; the devhost's parity tests were recorded with ${recorded[name]}. ` +
        `The devhost speaks that library's private protocol: re-run its tests (devhost/docs/real-host.md#versions) before trusting it.`,
    ];
  });
  return { line, warnings };
}
