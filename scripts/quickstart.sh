#!/usr/bin/env bash
# scripts/quickstart.sh - edgeload end to end on this machine: installs the
# build dependencies, builds edgeload, starts DynamoDB Local, creates the
# tables Graph and School, loads the two examples of samples/ and shows both
# directions of each with the AWS CLI.
#
# DynamoDB Local is left running (in memory, 127.0.0.1:$EDGELOAD_DDB_PORT,
# default 8000) so you can keep querying; `scripts/ddb-local.sh stop` stops it.
# Running the script again reloads the samples into the same tables.
set -euo pipefail
EL_PROG=quickstart
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

el_apt_install "${EL_BUILD_PACKAGES[@]}" awscli curl ca-certificates
el_say "building edgeload in build/"
el_build build
# Paths below are relative to the repository, as a user would type them.
cd "$EL_ROOT"
EDGELOAD=build/edgeload
[ -x "$EDGELOAD" ] || el_die "build produced no $EDGELOAD"

"$EL_ROOT/scripts/ddb-local.sh" start
el_use_local_aws
ENDPOINT=$(el_ddb_endpoint)

# The AWS CLI against DynamoDB Local (older AWS CLIs ignore
# AWS_ENDPOINT_URL_DYNAMODB, so the endpoint is given explicitly).
ddb() { el_aws dynamodb --endpoint-url "$ENDPOINT" "$@"; }

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
# Shows a command as one would type it: arguments with spaces or shell
# characters in single quotes.
step() {
  local out="" a
  for a in "$@"; do
    case "$a" in
      *[!A-Za-z0-9_./:=@#,+-]*) out+=" '$a'" ;;
      *) out+=" $a" ;;
    esac
  done
  printf '\n%s$%s%s\n' "$bold" "$out" "$plain"
}
run() { step "$@"; "$@"; }

for sample in social school; do
  mapping="samples/$sample/mapping.json"
  table=$(sed -n 's/^ *"table": *"\([^"]*\)".*/\1/p' "$mapping" | head -n1)
  if ddb describe-table --table-name "$table" >/dev/null 2>&1; then
    el_say "table $table exists already; loading into it again"
  else
    run "$EDGELOAD" create-table --table "$table" --endpoint-url "$ENDPOINT"
  fi
  run "$EDGELOAD" load --mapping "$mapping" --endpoint-url "$ENDPOINT"
done

# Each query prints a small table of the attributes that tell the story
# (blank where an item does not have the attribute).
show() {
  local title=$1 projection=$2; shift 2
  printf '\n%s== %s%s\n' "$bold" "$title" "$plain"
  step aws dynamodb query "$@"
  ddb query "$@" --output table --query "Items[].{$projection}"
}

show "Whom alice follows (base table, PK = ACTOR#alice)" \
  'PK:PK.S,SK:SK.S,createdAt:createdAt.N,edgeType:edgeType.S' \
  --table-name Graph --key-condition-expression 'PK = :pk' \
  --expression-attribute-values '{":pk":{"S":"ACTOR#alice"}}'

show "Who follows bob (index GSI1, GSI1PK = TARGET#bob)" \
  'GSI1PK:GSI1PK.S,GSI1SK:GSI1SK.S,createdAt:createdAt.N,edgeType:edgeType.S' \
  --table-name Graph --index-name GSI1 --key-condition-expression 'GSI1PK = :pk' \
  --expression-attribute-values '{":pk":{"S":"TARGET#bob"}}'

show "Student a91: profile and courses in one Query (PK = STU#a91)" \
  "PK:PK.S,SK:SK.S,name:name.S||'',email:email.S||'',grade:grade.S||'',enrolledOn:enrolledOn.S||''" \
  --table-name School --key-condition-expression 'PK = :pk' \
  --expression-attribute-values '{":pk":{"S":"STU#a91"}}'

show "Course math204: details and roster through GSI1 (GSI1PK = CRS#math204)" \
  "GSI1PK:GSI1PK.S,GSI1SK:GSI1SK.S,title:title.S||'',credits:credits.N||'',grade:grade.S||''" \
  --table-name School --index-name GSI1 --key-condition-expression 'GSI1PK = :pk' \
  --expression-attribute-values '{":pk":{"S":"CRS#math204"}}'

printf '\nDynamoDB Local keeps running on %s; stop it with scripts/ddb-local.sh stop\n' "$ENDPOINT"
