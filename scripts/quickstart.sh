#!/usr/bin/env bash
# Sets up and runs Ariadne's main job on the embedded default store (the
# local folder ./ariadne-data): builds the ariadne command, writes a small
# generated data lake of CSV files, creates an index over it, tracks the
# files and describes the result. Safe to run again: it reconnects.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== building ./bin/ariadne"
go build -o bin/ariadne ./cmd/ariadne
A=./bin/ariadne
export ARIADNE_STORE="${ARIADNE_STORE:-file://$PWD/ariadne-data}"

data="$PWD/quickstart-data/orders"
mkdir -p "$data"
for day in 01 02 03; do
  f="$data/orders_2024-06-$day.csv"
  [ -f "$f" ] && continue
  { echo "order_id,customer_id,amount,ordered_at"
    for i in $(seq 1 200); do
      echo "$day$i,cust-$(( (i * 7 + 10#$day) % 50 )),$(( i % 97 )).50,2024-06-$day 12:00:00"
    done; } > "$f"
done

echo "== ariadne create orders (schema inferred from the first file)"
$A create orders --format csv --read-option header=true --infer-from "$data/orders_2024-06-01.csv"
echo "== ariadne add-files orders $data"
$A add-files orders "$data"
echo "== ariadne files orders"
$A files orders
echo "== ariadne describe orders"
$A describe orders
echo "== ariadne find-indexes $data/orders_2024-06-02.csv"
$A find-indexes "$data/orders_2024-06-02.csv"
echo
echo "Store: $ARIADNE_STORE   (try: $A --help)"
