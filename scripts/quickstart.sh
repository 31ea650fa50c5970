#!/usr/bin/env bash
# Sets up and runs Ariadne's main job on the embedded default store (the
# local folder ./ariadne-data): builds the ariadne command, writes a small
# generated data lake of CSV files, creates an index over it, tracks the
# files, builds the index, and answers lookups and a join from it.
# Safe to run again: every step reconnects or is a no-op.
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
      echo "$day$i,cust-$(( 10#$day * 40 + i % 50 )),$(( i % 97 )).50,2024-06-$day 12:00:00"
    done; } > "$f"
done

echo "== ariadne create orders (schema inferred from the first file)"
$A create orders --format csv --read-option header=true --infer-from "$data/orders_2024-06-01.csv"
echo "== ariadne add-files orders $data"
$A add-files orders "$data"
echo "== ariadne add-index orders: exact customer ids, a bloom filter on order ids, amount ranges"
$A add-index orders --regular customer_id --bloom order_id --range amount
echo "== ariadne update orders"
$A update orders
echo "== ariadne describe orders"
$A describe orders
echo "== ariadne locate orders --key customer_id=cust-100   (which files can hold customer 100?)"
$A locate orders --key customer_id=cust-100
echo "== ariadne locate orders --key order_id=299            (bloom filter: order 02|99 is in the 2 June file)"
$A locate orders --key order_id=299
echo "== ariadne locate orders --key amount=96.5 --key customer_id=cust-60   (AND across columns)"
$A locate orders --key amount=96.5 --key customer_id=cust-60
echo "== ariadne join orders --keys customers.csv --on customer_id   (reads only the located files)"
printf 'customer_id\ncust-45\ncust-100\n' > "$PWD/quickstart-data/customers.csv"
$A join orders --keys "$PWD/quickstart-data/customers.csv" --on customer_id | head -5
echo "== ariadne find-indexes $data/orders_2024-06-02.csv"
$A find-indexes "$data/orders_2024-06-02.csv"
echo
echo "Store: $ARIADNE_STORE   (try: $A --help)"
