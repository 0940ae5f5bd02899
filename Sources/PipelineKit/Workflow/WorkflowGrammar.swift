import StageKit

/// The structure of a workflow file, declared once: the loader checks keys and required members against
/// it, and ``WorkflowSchema`` generates the JSON Schema from it, so the two cannot drift apart.
enum WorkflowGrammar {
    /// What a member holds, as far as its shape goes (the loader checks meaning, such as references).
    indirect enum Kind: Sendable {
        case string
        /// A string that matches `pattern`.
        case matching(pattern: String)
        /// The workflow's format version.
        case version
        case boolean
        /// An integer from `range`.
        case integer(ClosedRange<Int>)
        /// A number from `range`.
        case number(ClosedRange<Double>)
        /// Seconds, or a string such as `"30s"`.
        case duration
        /// Bytes, or a string such as `"2GiB"`.
        case size
        /// One of these strings.
        case choice([String])
        /// A pattern or an array of patterns.
        case patterns
        /// A `${...}` condition or a boolean.
        case condition
        case strings
        /// An object of options for a stage (checked against the stage's own schema).
        case options
        /// An object whose member names are identifiers.
        case identifierKeys
        /// An object laid out as `section`.
        case section(Section)
        /// A non-empty array of stages.
        case stages
        /// An array of objects laid out as `section`.
        case list(Section)
    }

    /// One member of an object.
    struct Member: Sendable {
        var name: String
        var kind: Kind
        var isRequired = false
        var summary: String
        /// The stage types the summary ends by naming, from those registered: a member that only some stage
        /// types take says which, as they declare it.
        var namingStageTypes: (@Sendable (StageDescriptor) -> Bool)? = nil

        /// The summary, naming the stage types of `stageTypes` that ``namingStageTypes`` picks.
        func summary(among stageTypes: [StageDescriptor]) -> String {
            guard let namingStageTypes else { return summary }
            let names = stageTypes.filter(namingStageTypes).map(\.stageType)
            guard !names.isEmpty else { return summary }
            return "\(summary.dropLast(summary.hasSuffix(".") ? 1 : 0)) (\(names.joined(separator: ", ")))."
        }
    }

    /// An object of the workflow file and its members.
    struct Section: Sendable {
        /// How its keys are named in messages ("stage key").
        var keyName: String
        var members: [Member]

        /// The member names, for "unknown key" checks and suggestions.
        var names: [String] { members.map(\.name) }
    }

    /// A stage id or var name: a letter or `_`, then letters, digits, `_`, `-`.
    static let identifier = "^[A-Za-z_][A-Za-z0-9_-]{0,99}$"

    static let retry = Section(
        keyName: "retry key",
        members: [
            Member(name: "attempts", kind: .integer(1...1000), summary: "Attempts in all, the first included."),
            Member(name: "initialDelay", kind: .duration, summary: "The wait before the first retry."),
            Member(name: "maxDelay", kind: .duration, summary: "The longest wait between attempts."),
            Member(name: "multiplier", kind: .number(1...100), summary: "How much the wait grows after each attempt."),
        ])

    static let stage = Section(
        keyName: "stage key",
        members: [
            Member(
                name: "id", kind: .matching(pattern: identifier), isRequired: true,
                summary: "Unique id; later stages read its outputs as ${id.output}."),
            Member(
                name: "uses", kind: .string, isRequired: true, summary: "The stage type (pipeline stages lists them)."),
            Member(name: "with", kind: .options, summary: "The stage's options; strings may contain ${...} templates."),
            Member(
                name: "after", kind: .strings,
                summary:
                    "The ids of the stages it waits for (without it, the stage before it); stages whose waits are over run at the same time."
            ),
            Member(
                name: "stream", kind: .boolean,
                summary:
                    "A stage that follows an export, given ${export.path}, starts when the export starts and reads the file as it is written.",
                namingStageTypes: { $0.streamRole == .follower }),
            Member(name: "retry", kind: .section(retry), summary: "How often and how patiently to retry."),
            Member(name: "timeout", kind: .duration, summary: "The longest one attempt may take."),
            Member(
                name: "if", kind: .condition,
                summary: "Run the stage only when this condition is true, e.g. \"input.ext == 'mov'\"."),
            Member(
                name: "refreshWith", kind: .string,
                summary: "An earlier stage that renews credentials when this one gets a 401."),
            Member(
                name: "secret", kind: .boolean,
                summary: "The stage's outputs are secrets: never stored or logged; it runs again when needed."),
            Member(name: "description", kind: .string, summary: "One line for people."),
        ])

    static let inputs = Section(
        keyName: "inputs key",
        members: [
            Member(name: "path", kind: .string, isRequired: true, summary: "A file or folder."),
            Member(name: "include", kind: .patterns, summary: "Shell patterns of the files to take (e.g. *.mp4)."),
            Member(name: "exclude", kind: .patterns, summary: "Shell patterns of the files to leave out."),
            Member(name: "recursive", kind: .boolean, summary: "Whether to descend into subfolders."),
            Member(
                name: "fingerprint", kind: .choice(FingerprintMethod.allCases.map(\.rawValue)),
                summary: "How a file's content is identified: sampled blocks (default) or every byte."),
            Member(
                name: "manifest", kind: .string,
                summary: "A CSV (with a file column) or JSON file of per-file fields, as ${input.meta.*}."),
            Member(
                name: "limits", kind: .section(limits),
                summary: "Files outside these limits are skipped, with the reason, before any stage runs."),
            Member(
                name: "damaged", kind: .choice(DamagedInputPolicy.allCases.map(\.rawValue)),
                summary:
                    "A file named as media that FFmpeg cannot read or that decodes short: fail its item (default), skip it, or export what decodes."
            ),
        ])

    static let limits = Section(
        keyName: "limits key",
        members: [
            Member(name: "minSize", kind: .size, summary: "The smallest file taken, e.g. 1KiB."),
            Member(name: "maxSize", kind: .size, summary: "The largest file taken, e.g. 2GiB."),
            Member(name: "minDuration", kind: .duration, summary: "The shortest media taken, e.g. 1s."),
            Member(name: "maxDuration", kind: .duration, summary: "The longest media taken, e.g. 2h."),
            Member(
                name: "containers", kind: .strings,
                summary: "Containers taken, as FFmpeg names them (mp4, mov, matroska, webm)."),
            Member(name: "videoCodecs", kind: .strings, summary: "Video codecs taken (h264, hevc, vp9, av1)."),
        ])

    static let defaults = Section(
        keyName: "defaults key",
        members: [
            Member(name: "retry", kind: .section(retry), summary: "The retry policy of every stage."),
            Member(name: "timeout", kind: .duration, summary: "The timeout of every stage."),
        ])

    static let notify = Section(
        keyName: "notify key",
        members: [
            Member(
                name: "url", kind: .string, isRequired: true,
                summary: "The webhook's http(s) URL; it may read ${env.NAME}, nothing else."),
            Member(
                name: "on", kind: .strings,
                summary: "The events it gets: batchFinished (the default), itemFailed."),
            Member(
                name: "format", kind: .choice(NotificationFormat.allCases.map(\.rawValue)),
                summary: "The message shape; without it, from the URL's host (Slack, Discord, else generic JSON)."),
        ])

    static let workflow = Section(
        keyName: "workflow key",
        members: [
            Member(name: "$schema", kind: .string, summary: "The JSON Schema, for editors."),
            Member(name: "version", kind: .version, isRequired: true, summary: "The format version."),
            Member(
                name: "name", kind: .matching(pattern: "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$"),
                summary: "Names the workflow in the ledger; a rerun with the same name resumes."),
            Member(name: "description", kind: .string, summary: "One line for people."),
            Member(name: "inputs", kind: .section(inputs), summary: "The files the workflow runs on."),
            Member(
                name: "vars", kind: .identifierKeys, summary: "Values and templates, resolved per item as ${vars.name}."
            ),
            Member(name: "defaults", kind: .section(defaults), summary: "Retry and timeout of every stage."),
            Member(name: "plugins", kind: .strings, summary: "Stage plugin libraries to load, relative to this file."),
            Member(
                name: "notify", kind: .list(notify),
                summary: "Webhooks `pipeline run` announces the batch's end and failures to."),
            Member(name: "stages", kind: .stages, isRequired: true, summary: "The stages, in the order they run."),
            Member(
                name: "onCancel", kind: .stages,
                summary: "Stages `pipeline cancel` runs to undo an item's remote side effects."),
        ])
}
