#!/usr/bin/env bash
# Deploys Tallyho to Azure with the az CLI: provision (infra/main.bicep at subscription scope),
# build and package (the bundled app, dist/app), publish to Flex Consumption,
# then a smoke check (registered functions, GET /api/health).
#
#   npm run deploy -- --env dev --location swedencentral
#   npm run deploy -- --env dev --location swedencentral --dry-run   # print the commands only
#
# azd uses the same steps through azure.yaml hooks (--package-only, --smoke-only).
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/deploy.sh [options]

  --env NAME                 environment name, part of every resource name (default: $AZURE_ENV_NAME)
  --location REGION          Azure region with Flex Consumption (default: $AZURE_LOCATION)
  --subscription ID          subscription to deploy to (default: az's current one)
  --node-version 20|22       Node.js runtime version (default: $TALLYHO_NODE_VERSION, else 22)
  --developer-principal ID   object id to grant the app's data roles (default: the signed-in user;
                             "none" to skip, e.g. when a service principal deploys)
  --auth keys|entra|keys+entra
                             who opens the door (default: $TALLYHO_AUTH_MODE, else keys); the entra
                             modes turn on App Service authentication with a Microsoft Entra ID app
                             registration (docs/deployment.md, "Microsoft Entra ID")
  --entra-client-id ID       that registration's application (client) id (default:
                             $TALLYHO_ENTRA_CLIENT_ID; else the script finds or creates tallyho-<env>)
  --worker-role PROCESSOR    also define the app role Tallyho.Worker.PROCESSOR (repeatable)
  --publish cli|api          cli: az functionapp deployment source config-zip (az 2.60 or later,
                             Flex-aware); api: POST the zip to https://<scm>/api/publish with an
                             Entra token (any az). Default: cli when az is 2.60 or later, else api
  --skip-provision           publish to what the last provisioning of this environment created
  --package-only             build .deploy/package and .deploy/tallyho.zip, nothing else (azd)
  --from-build               package what `npm run build` left in dist/ as it is: no npm ci, build
                             or infra sync first (the package test; a quicker re-package)
  --smoke-only               only the smoke check (azd postdeploy; reads FUNCTION_APP_NAME,
                             AZURE_RESOURCE_GROUP and FUNCTION_APP_BASE_URL from the environment)
  --dry-run                  print every command instead of running it (no az or network needed)
  -h, --help                 this text
EOF
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env_name="${AZURE_ENV_NAME:-}"
location="${AZURE_LOCATION:-}"
subscription=""
node_version="${TALLYHO_NODE_VERSION:-22}"
developer_principal=""
auth_mode="${TALLYHO_AUTH_MODE:-keys}"
entra_client_id="${TALLYHO_ENTRA_CLIENT_ID:-}"
worker_roles=()
publish=""
skip_provision=false
package_only=false
from_build=false
smoke_only=false
dry_run=false

while [[ $# -gt 0 ]]; do
  case "$1" in
    --env) env_name="${2:?--env needs a value}"; shift 2 ;;
    --location) location="${2:?--location needs a value}"; shift 2 ;;
    --subscription) subscription="${2:?--subscription needs a value}"; shift 2 ;;
    --node-version) node_version="${2:?--node-version needs a value}"; shift 2 ;;
    --developer-principal) developer_principal="${2:?--developer-principal needs a value}"; shift 2 ;;
    --auth) auth_mode="${2:?--auth needs a value}"; shift 2 ;;
    --entra-client-id) entra_client_id="${2:?--entra-client-id needs a value}"; shift 2 ;;
    --worker-role) worker_roles+=("${2:?--worker-role needs a value}"); shift 2 ;;
    --publish) publish="${2:?--publish needs a value}"; shift 2 ;;
    --skip-provision) skip_provision=true; shift ;;
    --package-only) package_only=true; shift ;;
    --from-build) from_build=true; shift ;;
    --smoke-only) smoke_only=true; shift ;;
    --dry-run) dry_run=true; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "deploy: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

fail() {
  echo "deploy: $*" >&2
  exit 1
}

step() {
  printf '\n== %s\n' "$*"
}

# Prints a command (shell-quoted) and runs it, or only prints it in dry-run mode.
run() {
  printf '+'
  printf ' %q' "$@"
  printf '\n'
  if [[ "$dry_run" == false ]]; then
    "$@"
  fi
}

# Like run, for commands whose output is needed; in dry-run mode it prints the placeholder instead.
# The command line goes to fd 3 (the script's stdout), since stdout here is being captured.
exec 3>&1
capture() {
  local placeholder="$1"
  shift
  printf '+' >&3
  printf ' %q' "$@" >&3
  printf '\n' >&3
  if [[ "$dry_run" == true ]]; then
    printf '%s' "$placeholder"
  else
    "$@"
  fi
}

require_tools() {
  local missing=()
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ "$dry_run" == true ]]; then
      echo "(dry run: would need ${missing[*]}, not found here)"
    else
      fail "missing tools: ${missing[*]} (see README, Deployment)"
    fi
  fi
}

# Reads one value out of a deployment's outputs JSON (node is always there; jq may not be).
output_value() {
  node -e 'const o = JSON.parse(require("fs").readFileSync(0, "utf8")); const v = o[process.argv[1]]; if (!v) process.exit(3); process.stdout.write(String(v.value));' "$1"
}

az_version_at_least() {
  local have
  have="$(az version --query '"azure-cli"' -o tsv 2>/dev/null || echo 0)"
  [[ "$(printf '%s\n%s\n' "$1" "$have" | sort -V | head -n1)" == "$1" ]]
}

deployment_name() {
  echo "tallyho-${env_name}"
}

# Paths below are relative to the repository root.
cd "$root"
stage=".deploy/package"
zip_file=".deploy/tallyho.zip"

npm_ci() {
  run npm ci "$@"
}

# run, inside a directory (a subshell, so the caller stays where it is).
run_in() {
  local dir="$1"
  shift
  printf '+ (cd %q &&' "$dir"
  printf ' %q' "$@"
  printf ')\n'
  if [[ "$dry_run" == false ]]; then
    (cd "$dir" && "$@")
  fi
}

# "Deployed but 0 functions" is what a package.json main pointing outside the package looks like.
check_main() {
  local main
  if [[ "$dry_run" == true ]]; then
    echo "(check: the file package.json \"main\" names is inside $stage)"
    return
  fi
  main="$(node -p 'require(process.argv[1]).main' "$PWD/$stage/package.json")"
  [[ -f "$stage/$main" ]] || fail "package.json main ($main) is not in the package"
}

build_and_package() {
  step "Build and package"
  if [[ "$from_build" == false ]]; then
    npm_ci --no-audit --no-fund
    # The build transpiles without checking types (esbuild): they are checked before anything ships.
    run npm run typecheck
    run npm run build
    # Bicep provisions what infra/app-resources.json lists: regenerate it from the code being shipped.
    run node scripts/infra-sync.mjs
  fi
  [[ "$dry_run" == true || -f dist/app/index.js ]] || fail "no build in dist/app (run npm run build)"
  run rm -rf "$stage" "$zip_file"
  run mkdir -p "$stage/dist"
  # The app is one bundle with its dependencies inside (scripts/build-app.mjs): dist/app is all it
  # loads, so the package holds no node_modules, and its package.json only what the worker reads.
  run cp -R dist/app "$stage/dist/"
  # The bundle's code cache (scripts/app-entry.cjs) is V8's, so only the Node major that made it
  # can use it: for an app that runs on another, it is left out (a start then compiles the source).
  local builder
  builder="$(node -p 'process.versions.node.split(".")[0]')"
  if [[ "$builder" != "$node_version" ]]; then
    echo "The bundle's code cache was made by Node $builder and the app runs on Node $node_version: left out (build with Node $node_version to ship it)"
    run rm -f "$stage/dist/app/tallyho.js.cache"
  else
    # A cache serves the path it was made for, so the package's is made for where Azure runs a
    # package on Linux: mounted read-only at /home/site/wwwroot.
    run node scripts/build-app.mjs code-cache "$stage/dist/app" /home/site/wwwroot/dist/app
  fi
  run cp host.json "$stage/"
  run node scripts/package-manifest.mjs "$stage/package.json"
  check_main
  run_in "$stage" zip -q -r ../tallyho.zip .
  echo "package: $zip_file"
}

provision() {
  step "Provision (infra/main.bicep)"
  [[ -n "$location" ]] || fail "--location (or AZURE_LOCATION) is required to provision"
  if [[ -z "$developer_principal" ]]; then
    developer_principal="$(capture '<signed-in-user-object-id>' az ad signed-in-user show --query id -o tsv || true)"
    [[ -n "$developer_principal" ]] || echo "(not signed in as a user: no developer data roles; pass --developer-principal to grant them)"
  fi
  [[ "$developer_principal" == "none" ]] && developer_principal=""
  run az deployment sub create \
    --name "$(deployment_name)" \
    --location "$location" \
    --template-file infra/main.bicep \
    --parameters environmentName="$env_name" location="$location" nodeVersion="$node_version" \
    developerPrincipalId="$developer_principal" authMode="$auth_mode" entraClientId="$entra_client_id" \
    --output none
}

# The Microsoft Entra ID app registration the entra modes need (the Graph Bicep extension cannot be
# restored offline, and creating an application needs Graph rights a resource deployment rarely has):
# found by name or created, with the app roles scripts/entra-app-roles.mjs lists, v2 access tokens
# (their audience is the client id, their issuer <authority>/<tenant>/v2.0, as shared/identity checks)
# and a service principal, so roles can be assigned and tokens issued.
entra_registration() {
  step "Microsoft Entra ID app registration"
  local name="tallyho-${env_name}" roles=".deploy/app-roles.json" object
  run mkdir -p .deploy
  printf '+ node scripts/entra-app-roles.mjs'
  printf ' %q' "${worker_roles[@]}"
  printf ' > %q\n' "$roles"
  if [[ "$dry_run" == false ]]; then
    node scripts/entra-app-roles.mjs "${worker_roles[@]}" >"$roles"
  fi
  if [[ -z "$entra_client_id" ]]; then
    entra_client_id="$(capture '' az ad app list --display-name "$name" --query '[0].appId' -o tsv)"
  fi
  if [[ -z "$entra_client_id" ]]; then
    entra_client_id="$(capture '<entra-client-id>' az ad app create --display-name "$name" --sign-in-audience AzureADMyOrg \
      --enable-id-token-issuance true --app-roles "@$roles" --query appId -o tsv)"
  else
    run az ad app update --id "$entra_client_id" --app-roles "@$roles"
  fi
  run az ad app update --id "$entra_client_id" --identifier-uris "api://$entra_client_id"
  run az rest --method PATCH --uri "https://graph.microsoft.com/v1.0/applications(appId='$entra_client_id')" \
    --headers Content-Type=application/json --body '{"api":{"requestedAccessTokenVersion":2}}'
  object="$(capture '' az ad sp list --filter "appId eq '$entra_client_id'" --query '[0].id' -o tsv)"
  if [[ -z "$object" ]]; then
    run az ad sp create --id "$entra_client_id" --output none
  fi
  echo "Entra app registration: $entra_client_id (azd: azd env set TALLYHO_ENTRA_CLIENT_ID $entra_client_id)"
}

# Browser sign-in (/.auth/login/aad) returns to the app's own host, known once it exists.
entra_redirect() {
  run az ad app update --id "$entra_client_id" --web-redirect-uris "$base_url/.auth/login/aad/callback"
}

read_outputs() {
  local outputs
  outputs="$(capture '{}' az deployment sub show --name "$(deployment_name)" --query properties.outputs -o json)"
  if [[ "$dry_run" == true ]]; then
    app="<FUNCTION_APP_NAME>"
    resource_group="<AZURE_RESOURCE_GROUP>"
    base_url="https://<FUNCTION_APP_NAME>.azurewebsites.net"
    return
  fi
  app="$(output_value FUNCTION_APP_NAME <<<"$outputs")"
  resource_group="$(output_value AZURE_RESOURCE_GROUP <<<"$outputs")"
  base_url="$(output_value FUNCTION_APP_BASE_URL <<<"$outputs")"
}

publish_with_cli() {
  # Flex-aware az (2.60+) sees the plan is Flex Consumption and posts to /api/publish itself, then
  # waits for the deployment. The package is prebuilt, so no remote build.
  run az functionapp deployment source config-zip \
    --resource-group "$resource_group" --name "$app" --src "$zip_file"
}

publish_with_api() {
  local scm token id status headers
  scm="$(capture '<scm-host>' az functionapp show --resource-group "$resource_group" --name "$app" \
    --query "hostNameSslStates[?hostType=='Repository'].name | [0]" -o tsv)"
  # The token goes through a mode-600 header file so it never appears in a command line or a log.
  token="$(capture '<token>' az account get-access-token --query accessToken -o tsv)"
  if [[ "$dry_run" == true ]]; then
    headers="<header-file>"
  else
    headers_file="$(umask 077 && mktemp)"
    trap 'rm -f "$headers_file"' EXIT
    headers="$headers_file"
    printf 'Authorization: Bearer %s\nContent-Type: application/zip\n' "$token" >"$headers"
  fi
  id="$(capture '<deployment-id>' curl -sS --fail-with-body -X POST -H "@$headers" --data-binary "@$zip_file" \
    "https://$scm/api/publish?RemoteBuild=false&Deployer=tallyho-deploy")"
  id="${id//\"/}"
  echo "deployment id: $id"
  [[ "$dry_run" == true ]] && return
  # Statuses: 0 pending, 1 building, 2 deploying, 3 failed, 4 success, 5 conflict, 6 partial, -1 cancelled.
  for _ in $(seq 1 120); do
    status="$(curl -sS -H "@$headers" "https://$scm/api/deployments/$id" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{process.stdout.write(String(JSON.parse(s).status))}catch{process.stdout.write("?")}})')"
    case "$status" in
      4) echo "published"; return ;;
      3 | 5 | 6 | -1) fail "deployment $id ended with status $status (see https://$scm/api/deployments/$id/log)" ;;
    esac
    sleep 5
  done
  fail "deployment $id did not finish within 10 minutes"
}

publish_package() {
  step "Publish to Flex Consumption"
  if [[ -z "$publish" ]]; then
    if [[ "$dry_run" == false ]] && ! az_version_at_least 2.60.0; then publish=api; else publish=cli; fi
  fi
  case "$publish" in
    cli) publish_with_cli ;;
    api) publish_with_api ;;
    *) fail "--publish must be cli or api" ;;
  esac
}

smoke_check() {
  step "Smoke check"
  local names count code body
  body=".deploy/health.json"
  # Functions appear once the host has loaded the package; give it a minute.
  for attempt in 1 2 3 4 5 6; do
    names="$(capture '<function names>' az functionapp function list --resource-group "$resource_group" --name "$app" --query '[].name' -o tsv || true)"
    count="$(grep -c . <<<"$names" || true)"
    [[ "$count" -gt 0 || "$dry_run" == true || "$attempt" == 6 ]] && break
    sleep 10
  done
  [[ "$count" -gt 0 ]] || fail "no functions registered: check package.json main and node_modules in $zip_file"
  [[ "$dry_run" == true ]] || echo "functions registered: $count"
  code="$(capture 200 curl -sS --max-time 30 --retry 5 --retry-delay 10 --retry-all-errors -o "$body" -w '%{http_code}' "$base_url/api/health")"
  [[ "$dry_run" == true ]] || cat "$body"
  [[ "$code" == 200 ]] || fail "GET $base_url/api/health answered $code"
  [[ "$dry_run" == true ]] || echo "healthy: $base_url"
}

if [[ "$dry_run" == true ]]; then
  echo "(dry run: printing the commands, running none)"
fi

if [[ "$package_only" == true ]]; then
  require_tools node npm zip
  build_and_package
  exit 0
fi

if [[ "$smoke_only" == true ]]; then
  require_tools az curl
  app="${FUNCTION_APP_NAME:?FUNCTION_APP_NAME is not set}"
  resource_group="${AZURE_RESOURCE_GROUP:?AZURE_RESOURCE_GROUP is not set}"
  base_url="${FUNCTION_APP_BASE_URL:?FUNCTION_APP_BASE_URL is not set}"
  smoke_check
  exit 0
fi

[[ -n "$env_name" ]] || fail "--env (or AZURE_ENV_NAME) is required"
[[ "$node_version" == 20 || "$node_version" == 22 ]] || fail "--node-version must be 20 or 22"
[[ "$auth_mode" == keys || "$auth_mode" == entra || "$auth_mode" == keys+entra ]] || fail "--auth must be keys, entra or keys+entra"
require_tools az node npm zip curl
if [[ -n "$subscription" ]]; then
  run az account set --subscription "$subscription"
fi
build_and_package
if [[ "$skip_provision" == false ]]; then
  [[ "$auth_mode" == keys ]] || entra_registration
  provision
fi
read_outputs
[[ "$auth_mode" == keys || "$skip_provision" == true ]] || entra_redirect
publish_package
smoke_check
