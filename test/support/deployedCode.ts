/**
 * The built code a deployment ships, and so what a real host here serves (`copyApp`'s `code`): the
 * app is one bundle with its dependencies inside (scripts/build-app.mjs), and scripts/deploy.sh
 * packages dist/app alone (test/e2e/package.test.ts checks the package holds nothing else). The rest
 * of dist (the devhost, benchmarks, tooling) never reaches Azure, so a host here does not see it either.
 */
export const deployedCode: readonly string[] = ['dist/app'];
