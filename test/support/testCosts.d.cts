export const costsDirVariable: 'TEST_COSTS_DIR';
export function fileKey(project: string, path: string): string;
export function repoPath(absolute: string): string;
export function shownKey(key: string): string;
export function testProject(): string | undefined;
