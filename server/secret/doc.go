// Package secret keeps the named secrets of chime server: values that job
// and alert templates insert with {{secret "name"}}, such as API tokens
// and webhook URLs, which no API answer ever returns.
//
// # Storage
//
// A [Service] keeps secrets in one table of the store's database
// ({prefix}secrets_values, created by [New] through the store's component
// migrations); every row carries the store's scheduler name. Values are
// encrypted with AES-256-GCM under a [Key] of 32 bytes that the server is
// configured with (chime server reads it from CHIME_SECRET_KEY or the file
// secret_key_file names) and that is never stored. Each value has its own
// random nonce and is bound to its scheduler and name as additional data,
// so a value copied to another row does not decrypt. The key's ID (16 hex
// digits of a SHA-256 of it) is stored with each value: a node started
// with another key says so, naming both IDs, instead of failing to
// decrypt. Every node of a cluster must have the same key.
//
// Without a key, secrets can be listed and deleted, but setting one is
// refused, and a job that refers to one fails when it fires, each with an
// error saying how to configure a key.
//
// To change the key, start the nodes with the new one and set every
// secret again: [Service.List] shows which key each value is encrypted
// with.
//
// # Masking
//
// A secret's value is written only by [Service.Set] and read only by
// [Service.Value], which the server calls when a job fires. The values a
// firing used are masked in its recorded output and error (package jobs'
// Redact), as a best effort.
//
// Values a job's spec holds outright are another matter: [MaskJob]
// shows a job as a viewer may read it, with the values of headers and
// variables whose names look sensitive ([SensitiveName]) masked, and
// alert webhook URLs cut to their scheme and host ([MaskURL]).
//
// # Audit and errors
//
// Every change is recorded through Options.Audit, never with the value.
// Errors a client can act on are *api.Error values naming the field.
package secret
