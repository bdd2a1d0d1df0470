import type { AppCopyOptions } from '../../devhost/realHost/appCopy';

/**
 * What a deployment ships, and so what a real host in the tests serves (`copyApp`'s `code` and
 * `nodeModules`): the app is one bundle with its dependencies inside (scripts/build-app.mjs), and
 * scripts/deploy.sh packages dist/app alone, without node_modules (test/e2e/package.test.ts checks
 * the package holds nothing else). The rest of dist (the devhost, benchmarks, tooling) and the
 * repository's node_modules never reach Azure, so a host here does not see them either: a dependency
 * the bundle lacks fails every real-host test, not only the package's.
 */
export const deployed = { code: ['dist/app'], nodeModules: false } as const satisfies Pick<AppCopyOptions, 'code' | 'nodeModules'>;
