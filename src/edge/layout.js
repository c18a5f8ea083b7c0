/*
 * layout.js - the store keys and state paths (docs/store.md), JavaScript twin
 * of include/linkbot/layout.h + src/base/layout.c. The edge reads only the
 * published keys; the state paths are here so that
 * tests/data/store-layout/vectors.json holds the whole layout in both
 * languages. Every key the edge reads is spelled here and nowhere else.
 */

// Names inside a folder (layout.h's LAYOUT_ names).
const DESCRIPTOR = 'endpoint.json';
const PROJECT = 'project.json';
const POOL = 'random.json';
const MANIFEST = 'manifest.json';
const PAGES = 'pages/';
const PROJECTS = '_projects/';
const STATE = '_state/';
const MARKER_TARGET = 'pages';

function endpointFolder(client, endpoint) {
    return client + '/' + endpoint;
}

function projectFolder(uuid) {
    return PROJECTS + uuid;
}

function key(folder, name) {
    return folder + (folder ? '/' : '') + name;
}

function pageKey(folder, id) {
    return folder + (folder ? '/' : '') + PAGES + id + '.json';
}

function markerKey(client, endpoint, variant) {
    return client + '/' + endpoint + '/active-' + variant;
}

function corpusPath(client) {
    return client + '/corpus.sqlite';
}

function linksPath(client, endpoint) {
    return client + '/' + endpoint + '/links.tsv';
}

function moduleLinksPath(client, uuid, module) {
    return client + '/' + PROJECTS + uuid + '/' + module + '.tsv';
}

function bonusPath(linksPath) {
    var slash = linksPath.lastIndexOf('/');
    return (slash >= 0 ? linksPath.slice(0, slash) : linksPath) + '/bonus.tsv';
}

function stateKey(path) {
    return STATE + path;
}

export default {
    DESCRIPTOR, PROJECT, POOL, MANIFEST, PAGES, PROJECTS, STATE,
    MARKER_TARGET,
    endpointFolder, projectFolder, key, pageKey, markerKey, corpusPath,
    linksPath, moduleLinksPath, bonusPath, stateKey
};
