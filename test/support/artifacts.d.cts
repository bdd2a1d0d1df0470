/** The artifacts test/support/artifacts.cjs builds. */
export type ArtifactName = 'dotnet' | 'npm-client' | 'nuget-client' | 'deploy-package';

export const artifactNames: readonly ArtifactName[];
/** Where the artifact for the current inputs is (or will be). */
export function artifactDir(name: ArtifactName): string;
/** The artifact's folder, built first when its inputs changed since the last build. */
export function ensureArtifact(name: ArtifactName, log?: (line: string) => void): Promise<string>;
/** The tool an artifact needs when it is missing here. */
export function missingTool(name: ArtifactName): string | undefined;
