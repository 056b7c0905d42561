// The AWS SDK for JavaScript v3 peer of scripts/bench.sh.
//
//   NODE_PATH=<dir>/node_modules node bench_peer_sdkv3.cjs IN.csv TABLE
//
// Reads the bench CSV (no quoted fields: the generator writes none), makes
// the same items as edgeload (see bench_peer.py) and writes them with
// @aws-sdk/lib-dynamodb's BatchWriteCommand, 25 items a batch, 16 batches in
// flight, UnprocessedItems resent with exponential backoff. Endpoint, region
// and credentials from the environment (AWS_ENDPOINT_URL_DYNAMODB, ...).
'use strict';
const fs = require('fs');
const readline = require('readline');
const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');
const { DynamoDBDocumentClient, BatchWriteCommand } = require('@aws-sdk/lib-dynamodb');
const { NodeHttpHandler } = require('@smithy/node-http-handler');
const http = require('http');

const INFLIGHT = 16;
const [, , path, table] = process.argv;
if (!path || !table) {
  console.error('usage: bench_peer_sdkv3.cjs IN.csv TABLE');
  process.exit(2);
}
const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.AWS_ENDPOINT_URL;
const client = DynamoDBDocumentClient.from(new DynamoDBClient({
  endpoint,
  requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent({ keepAlive: true, maxSockets: INFLIGHT }) }),
}));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function send(requests) {
  for (let attempt = 0; requests.length; attempt++) {
    if (attempt) await sleep(Math.random() * Math.min(2000, 25 * 2 ** attempt));
    const out = await client.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
    requests = (out.UnprocessedItems && out.UnprocessedItems[table]) || [];
  }
}

async function main() {
  const rl = readline.createInterface({ input: fs.createReadStream(path), crlfDelay: Infinity });
  let header = null, fi, ti, ci, n = 0, batch = [];
  const inflight = new Set();
  const flush = async () => {
    const p = send(batch).finally(() => inflight.delete(p));
    inflight.add(p);
    batch = [];
    if (inflight.size >= INFLIGHT) await Promise.race(inflight);
  };
  for await (const line of rl) {
    if (!line) continue;
    const r = line.split(',');
    if (!header) {
      header = r; fi = r.indexOf('follower_id'); ti = r.indexOf('followee_id'); ci = r.indexOf('created_at');
      continue;
    }
    const a = 'ACTOR#' + r[fi], b = 'TARGET#' + r[ti];
    const createdAt = Date.parse(r[ci].replace(' ', 'T') + 'Z') / 1000;
    batch.push({ PutRequest: { Item: { PK: a, SK: b, GSI1PK: b, GSI1SK: a, createdAt, edgeType: 'FOLLOWS' } } });
    n++;
    if (batch.length === 25) await flush();
  }
  if (batch.length) await flush();
  await Promise.all(inflight);
  console.log(n);
}
main().catch((e) => { console.error(e); process.exit(1); });
