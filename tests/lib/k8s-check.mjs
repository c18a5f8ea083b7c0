// k8s-check.mjs - validates Kubernetes manifests offline against the
// Kubernetes OpenAPI schemas that the npm package kubernetes-models ships
// (compiled JSON-schema validators, pinned by package-lock.json: no
// download at test time).
//
//   node tests/lib/k8s-check.mjs FILE...         exit 0 when every document
//                                                of every file is valid
//   node tests/lib/k8s-check.mjs --json FILE     prints the documents as a
//                                                JSON array (for assertions)
//
// Like kubectl without a server, it checks types, enums, formats and
// required fields; unknown fields pass (the OpenAPI schemas allow them),
// so tests assert the fields they rely on by value (ops-split.sh).
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

function docs(file) {
	const out = [];
	for (const d of parseAllDocuments(readFileSync(file, "utf8"))) {
		if (d.errors.length)
			throw new Error(`${file}: ${d.errors[0].message}`);
		const v = d.toJS();
		if (v !== null) out.push(v);
	}
	return out;
}

async function validate(file, doc, n) {
	const { apiVersion, kind } = doc;
	const where = `${file}: document ${n} (${kind}/${doc.metadata?.name})`;
	if (typeof apiVersion !== "string" || typeof kind !== "string" ||
	    !/^[A-Za-z0-9.\/-]+$/.test(apiVersion) || !/^[A-Za-z]+$/.test(kind))
		return `${where}: no apiVersion and kind`;
	let Model;
	try {
		Model = (await import(`kubernetes-models/${apiVersion}/${kind}`))[kind];
	} catch {
		return `${where}: no schema for ${apiVersion} ${kind}`;
	}
	try {
		new Model(doc).validate();
	} catch (e) {
		return `${where}: ${e.message}`;
	}
	console.log(`${where}: valid`);
	return null;
}

const args = process.argv.slice(2);
if (args[0] === "--json") {
	console.log(JSON.stringify(docs(args[1])));
} else {
	let bad = 0;
	for (const file of args) {
		let list;
		try {
			list = docs(file);
		} catch (e) {
			console.error(e.message);
			bad++;
			continue;
		}
		for (let i = 0; i < list.length; i++) {
			const why = await validate(file, list[i], i + 1);
			if (why) { console.error(why); bad++; }
		}
	}
	process.exit(bad || args.length === 0 ? 1 : 0);
}
