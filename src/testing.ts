/**
 * bothost/testing: what a bot's own tests import, chiefly the in-memory sandbox server.
 */
export {};
