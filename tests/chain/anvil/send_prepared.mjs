// Sends adnet's prepared transactions (read as JSON from stdin) as they are, in order, the way a dapp does with the
// library named first on the command line, and prints their hashes as JSON. Used by tests/chain/test_prepared.py.
//
//   node send_prepared.mjs viem|ethers|eip1193 RPC_URL [PRIVATE_KEY] < transactions.json
//
// viem and ethers get each object itself, signed by PRIVATE_KEY; eip1193 sends each object's `request` through
// the node's own accounts (anvil's unlocked development accounts), as a browser wallet's provider would.
import { createPublicClient, createWalletClient, defineChain, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { JsonRpcProvider, Wallet } from "ethers";

const [library, url, key] = process.argv.slice(2);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const transactions = JSON.parse(input);

const chain = defineChain({
  id: transactions[0].chainId, name: "adnet test chain",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [url] } },
});
const provider = new JsonRpcProvider(url, undefined, { cacheTimeout: -1 });

const senders = {
  async viem(transaction) {
    const wallet = createWalletClient({ account: privateKeyToAccount(key), chain, transport: http(url) });
    const hash = await wallet.sendTransaction(transaction);
    await createPublicClient({ chain, transport: http(url) }).waitForTransactionReceipt({ hash });
    return hash;
  },
  async ethers(transaction) {
    const sent = await new Wallet(key, provider).sendTransaction(transaction);
    await sent.wait();
    return sent.hash;
  },
  async eip1193(transaction) {
    const hash = await provider.send(transaction.request.method, transaction.request.params);
    await provider.waitForTransaction(hash);
    return hash;
  },
};

const hashes = [];
for (const transaction of transactions) hashes.push(await senders[library](transaction));
console.log(JSON.stringify(hashes));
