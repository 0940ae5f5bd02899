// The C boundary between `pipeline` and stage plugins loaded at run time.
//
// A plugin is a shared library exporting six functions (PipelinePluginSDK writes five of them; the
// plugin author writes `pipeline_plugin_register` in one line). Everything that crosses is plain C:
// integers, function pointers and UTF-8 JSON text, so a plugin built with its own copy of the Swift
// stage API (statically linked) works with any host that speaks the same PIPELINE_PLUGIN_ABI_VERSION.
#ifndef C_PIPELINE_PLUGIN_H
#define C_PIPELINE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The plugin ABI version. The host refuses a plugin that reports another one. Bump it whenever a
/// struct below, a function signature, or the JSON of a message changes.
/// 3: a stage's description carries its resource, readsMediaInput and retriesItself; its outputs may depend
/// on its options (`pipeline_plugin_outputs`); a run request carries the retry policy; the host takes a stage's
/// own retries (`retrying`).
/// 4: a stage's description carries its streamRole, inputFileOption and landingOutput, and its reasons not to stream
/// come from `pipeline_plugin_stream_refusal`; a follower's run request says `followsExport`, and the host lends it
/// `export_wait` to read the export while it is written.
#define PIPELINE_PLUGIN_ABI_VERSION 4

/// How a stage run ended (`finish`'s `status`).
typedef enum pipeline_stage_status {
    PIPELINE_STAGE_SUCCEEDED = 0,           ///< result: the outputs, a JSON object
    PIPELINE_STAGE_RETRYABLE = 1,           ///< result: the error message; a retry may help
    PIPELINE_STAGE_FATAL = 2,               ///< result: the error message
    PIPELINE_STAGE_CREDENTIALS_EXPIRED = 3, ///< result: the error message; renew and retry
    PIPELINE_STAGE_CANCELLED = 4,           ///< result: ignored
} pipeline_stage_status;

/// Where the export a follower reads stands (`pipeline_export_state.status`).
typedef enum pipeline_export_status {
    PIPELINE_EXPORT_WRITING = 0,  ///< the file grows: `head` to `final` may be read now
    PIPELINE_EXPORT_FINISHED = 1, ///< the file is finished, `finished_size` bytes: read the head now
    PIPELINE_EXPORT_FAILED = 2,   ///< the export ended without a file
} pipeline_export_status;

/// What is known of a followed export's file at one moment (`export_wait`).
typedef struct pipeline_export_state {
    /// Bytes at the start that change when the export finishes: read them last, from the finished file.
    int64_t head;
    /// Bytes written and durable: those from `head` to here are final. 0 after the export wrote its file again
    /// (`rewritten`) until it finishes.
    int64_t final;
    /// The finished file's size; -1 while it is written.
    int64_t finished_size;
    /// The export's attempt that writes the file, from 1 (0 before the first): another attempt writes a new file,
    /// which a reader reads from its start again.
    int32_t attempt;
    /// 1 when the export wrote its file again after saying bytes were final: read the finished file again.
    int32_t rewritten;
    /// A pipeline_export_status.
    int32_t status;
} pipeline_export_state;

/// What the host lends a running stage. All callbacks may be called from any thread; strings are
/// copied before the callback returns.
typedef struct pipeline_stage_host {
    void *context;
    /// Progress: `unit` 0 bytes, 1 seconds, 2 items; `total` < 0 when unknown.
    void (*progress)(void *context, int64_t completed, int64_t total, int32_t unit);
    /// A log line; `level` follows swift-log: 0 trace, 1 debug, 2 info, 3 notice, 4 warning, 5 error, 6 critical.
    void (*log)(void *context, int32_t level, const char *message);
    /// Persists resume data (JSON) durably before returning; 0 on success. It blocks until the data is on
    /// disk: call it from a thread that may block, never from a thread of Swift's cooperative pool.
    int32_t (*checkpoint)(void *context, const char *resume_json);
    /// Writes the idempotency key for `name` (persisted before it is returned) into `buffer`; 0 on success.
    /// It blocks like `checkpoint`.
    int32_t (*idempotency_key)(void *context, const char *name, char *buffer, size_t length);
    /// Ends the run, exactly once (also after a cancel). For a failure, `result` is a JSON object with
    /// `message` and `kind` (an ErrorKind such as "network"), and with PIPELINE_STAGE_RETRYABLE optionally
    /// `retryAfter` (the seconds the server asked to wait); for a success, the outputs object.
    void (*finish)(void *context, int32_t status, const char *result);
    /// A stage that retries itself failed attempt `attempt` (from 1) and tries again after `delay_ms`;
    /// `error` is a JSON object with `message` and `kind`, as for `finish`.
    void (*retrying)(void *context, int32_t attempt, int64_t delay_ms, const char *error);
    /// For a run whose request has `followsExport`: blocks until the bytes up to `bytes` of the export's file are
    /// final, the export ended, or its attempt is no longer `attempt` (0 before the first); then fills `state` and
    /// writes into `text` the file to read (the one being written, or the finished one) or, when the export
    /// failed, why. Open that file once per attempt and keep it open: the export renames the file it writes into
    /// place when it finishes. 0 on success; nonzero when the run follows no export, the path does not fit in
    /// `length` bytes, or the run is being cancelled (the host wakes the call then). It blocks like `checkpoint`,
    /// for as long as the export takes.
    int32_t (*export_wait)(
        void *context, int64_t bytes, int32_t attempt, pipeline_export_state *state, char *text, size_t length);
} pipeline_stage_host;

/// What a plugin registers its stages with.
typedef struct pipeline_plugin_registrar {
    int32_t abi_version;
    void *context;
    /// Registers stage number `stage`, described as JSON {type, summary, optionSchema, outputSchema, resource
    /// ("cpu", "network", "api" or "light"), readsMediaInput, retriesItself, streamRole ("none" or "follower": a
    /// plugin cannot write a stream), inputFileOption and landingOutput (option and output names, or null)}; 0 when
    /// accepted.
    int32_t (*register_stage)(void *context, int32_t stage, const char *descriptor_json);
    /// Says why registration failed.
    void (*fail)(void *context, const char *message);
} pipeline_plugin_registrar;

/// Exported by every plugin: the ABI version it was built with.
typedef int32_t (*pipeline_plugin_abi_version_fn)(void);
/// Exported by every plugin: registers its stages; 0 on success.
typedef int32_t (*pipeline_plugin_register_fn)(const pipeline_plugin_registrar *registrar);
/// Receives a JSON text for the length of the call (`pipeline_plugin_outputs`'s answer).
typedef void (*pipeline_plugin_text_fn)(void *context, const char *json);
/// Exported by every plugin: the outputs stage number `stage` declares for a workflow's `with` object (JSON,
/// its expressions unresolved), passed to `deliver` as an output schema {fields, isOpen} before it returns;
/// 0 on success. The host calls it while it checks a workflow, from any thread.
typedef int32_t (*pipeline_plugin_outputs_fn)(
    int32_t stage, const char *with_json, void *context, pipeline_plugin_text_fn deliver);
/// Exported by every plugin: why stage number `stage` cannot stream with a workflow's `with` object (JSON, its
/// expressions unresolved) on `inputs_json` {path (the file its input-file option names, when written out),
/// isInputFile, include, containers}: it passes the reason to `deliver` before it returns, or does not call it
/// when the stage can stream; 0 on success. The host calls it while it checks a workflow, from any thread.
typedef int32_t (*pipeline_plugin_stream_refusal_fn)(
    int32_t stage, const char *with_json, const char *inputs_json, void *context, pipeline_plugin_text_fn deliver);
/// Exported by every plugin: starts stage number `stage` with a JSON request {stageID, attempt, item,
/// options, resume, previousOutputs, scratchFolder, retryPolicy {attempts, initialDelay, maxDelay, multiplier}
/// (delays in seconds), followsExport (true when the host's `export_wait` reads the export the run streams)};
/// returns a handle for cancel. The run ends with one call of host->finish, possibly on another thread; the
/// plugin copies *host.
typedef void *(*pipeline_plugin_start_fn)(int32_t stage, const char *request_json, const pipeline_stage_host *host);
/// Exported by every plugin: asks a run to stop. The host never calls it after finish returned.
typedef void (*pipeline_plugin_cancel_fn)(void *handle);

/// The ABI version this header describes, for Swift (macros with arithmetic do not import).
int32_t pipeline_plugin_header_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif
