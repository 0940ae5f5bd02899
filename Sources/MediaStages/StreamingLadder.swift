import Foundation

/// The video renditions of an adaptive streaming ladder, and how they fit a source.
public struct StreamingLadder: Sendable, Hashable {
    /// One video rendition: a picture box and a bit rate.
    public struct Rung: Sendable, Hashable, Codable {
        /// The rendition's name, also its folder: `720p`.
        public var name: String
        /// The picture fits inside this box as displayed, keeping the aspect ratio.
        public var width: Int
        /// See ``width``.
        public var height: Int
        /// Average video bits per second.
        public var bitRate: Int64

        /// A rung whose box is 16:9 at `height` lines (`720`: 1280x720).
        public init(name: String? = nil, height: Int, bitRate: Int64) {
            self.name = name ?? "\(height)p"
            self.height = height
            self.width = (height * 16 / 9 + 1) / 2 * 2
            self.bitRate = bitRate
        }
    }

    /// The ladder's name (``named``), or `custom`.
    public var name: String
    /// Largest first.
    public var rungs: [Rung]

    /// The named ladders. Bit rates follow Apple's HLS authoring guidance for H.264 at 30 fps, rounded.
    public static let all = [
        StreamingLadder(
            name: "standard",
            rungs: [
                Rung(height: 1080, bitRate: 5_000_000), Rung(height: 720, bitRate: 2_800_000),
                Rung(height: 480, bitRate: 1_400_000), Rung(height: 360, bitRate: 800_000),
            ]),
        StreamingLadder(
            name: "compact",
            rungs: [
                Rung(height: 720, bitRate: 2_000_000), Rung(height: 480, bitRate: 1_000_000),
                Rung(height: 360, bitRate: 600_000), Rung(height: 240, bitRate: 300_000),
            ]),
    ]

    /// The named ladder, or nil.
    public static func named(_ name: String) -> StreamingLadder? {
        all.first { $0.name == name }
    }

    /// The rungs for a source shown at `height` lines: those not taller than the source (a rendition is never
    /// upscaled); when every rung is taller, the smallest alone, at the source's size.
    public func rungs(forSourceHeight height: Int) -> [Rung] {
        let fitting = rungs.filter { $0.height <= height }
        if !fitting.isEmpty { return fitting }
        return rungs.min { $0.height < $1.height }.map { [$0] } ?? []
    }
}

/// What a finished rendition is: the facts a master playlist and a DASH manifest list.
public struct RenditionFacts: Sendable, Hashable, Codable {
    /// The folder of the rendition inside the package, also its name: `720p`, `audio`.
    public var name: String
    /// `video` or `audio`.
    public var type: String
    /// Displayed size (0 for audio).
    public var width: Int
    /// See ``width``.
    public var height: Int
    /// Frames per second (0 for audio).
    public var frameRate: Double
    /// The RFC 6381 codecs string of the stream, read from its initialisation segment: `avc1.64001f`, `mp4a.40.2`.
    public var codecs: String
    /// The highest bit rate of any segment (HLS `BANDWIDTH`), bits per second.
    public var peakBitRate: Int64
    /// Bits per second over the whole rendition (HLS `AVERAGE-BANDWIDTH`).
    public var averageBitRate: Int64
    /// The media playlist, relative to the package's folder: `720p/index.m3u8`.
    public var playlist: String
    /// Seconds of each segment, in order (from the media playlist).
    public var segmentDurations: [Double]
    /// Audio channels (0 for video).
    public var channels: Int
    /// Audio samples per second (0 for video).
    public var sampleRate: Int
}

/// The media playlist of a rendition as the HLS muxer wrote it: its segments' durations and files.
struct MediaPlaylist {
    var segments: [(duration: Double, file: String)]

    init(_ text: String) {
        var segments: [(Double, String)] = []
        var duration: Double?
        for line in text.split(whereSeparator: \.isNewline).map(String.init) {
            if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst("#EXTINF:".count).prefix { $0 != "," })
            } else if !line.hasPrefix("#"), !line.isEmpty, let seconds = duration {
                segments.append((seconds, line))
                duration = nil
            }
        }
        self.segments = segments
    }
}

/// RFC 6381 codecs strings, read from the sample entry of an initialisation segment (`init.mp4`).
enum CodecString {
    /// `avc1.PPCCLL` from the `avcC` box (profile, constraint flags, level), `hvc1.…` from the `hvcC` box (ISO/IEC
    /// 14496-15 annex E), `av01.…` from the `av1C` box, or `mp4a.40.N` from the `esds` box (N: the AAC audio object
    /// type); nil when none is there.
    static func of(initSegment data: Data) -> String? {
        let bytes = [UInt8](data)
        if let at = find("avcC", in: bytes), at + 8 <= bytes.count {
            // After the type: configurationVersion, AVCProfileIndication, profile_compatibility, AVCLevelIndication.
            return String(format: "avc1.%02x%02x%02x", bytes[at + 5], bytes[at + 6], bytes[at + 7])
        }
        if let at = find("hvcC", in: bytes), at + 17 <= bytes.count {
            return hevc(Array(bytes[(at + 5)..<(at + 17)]))
        }
        if let at = find("av1C", in: bytes), at + 7 <= bytes.count {
            return av1(bytes[at + 5], bytes[at + 6])
        }
        if let at = find("esds", in: bytes), let type = audioObjectType(bytes, from: at + 8) {
            return "mp4a.40.\(type)"
        }
        return nil
    }

    /// `hvc1.[A-C]<profile>.<compatibility flags, bit-reversed, hex>.<L|H><level>[.<constraint byte>…]` from the
    /// `hvcC` bytes after its version: profile space, tier and profile, 4 compatibility bytes, 6 constraint bytes
    /// (trailing zero bytes left out) and the level, e.g. `hvc1.1.6.L93.B0` for Main at level 3.1.
    private static func hevc(_ general: [UInt8]) -> String {
        let space = ["", "A", "B", "C"][Int(general[0] >> 6)]
        let tier = general[0] & 0x20 != 0 ? "H" : "L"
        let compatibility = general[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var reversed: UInt32 = 0
        for bit in 0..<32 where compatibility & (1 << bit) != 0 { reversed |= 1 << (31 - bit) }
        var constraints = Array(general[5..<11])
        while constraints.last == 0 { constraints.removeLast() }
        return
            ([
                "hvc1", "\(space)\(general[0] & 0x1F)", String(reversed, radix: 16, uppercase: true),
                "\(tier)\(general[11])",
            ]
            + constraints.map { String(format: "%02X", $0) }).joined(separator: ".")
    }

    /// `av01.<profile>.<level><M|H>.<bit depth>` (the AV1 codec ISO media file format binding, section 5) from the
    /// `av1C` bytes after its marker and version: seq_profile and seq_level_idx_0, then seq_tier_0, high_bitdepth
    /// and twelve_bit; e.g. `av01.0.04M.08` for Main at level 3.0, 8 bits. The optional fields are left out.
    private static func av1(_ profileAndLevel: UInt8, _ flags: UInt8) -> String {
        let tier = flags & 0x80 != 0 ? "H" : "M"
        let depth = flags & 0x40 == 0 ? 8 : (flags & 0x20 != 0 ? 12 : 10)
        let level = String(format: "%02d", Int(profileAndLevel & 0x1F))
        return "av01.\(profileAndLevel >> 5).\(level)\(tier).\(String(format: "%02d", depth))"
    }

    private static func find(_ type: String, in bytes: [UInt8]) -> Int? {
        let tag = Array(type.utf8)
        guard bytes.count >= tag.count else { return nil }
        return (0...(bytes.count - tag.count)).first { bytes[$0..<$0 + tag.count].elementsEqual(tag) }
    }

    /// Walks the descriptors of an `esds` box (after its version and flags) to the DecoderSpecificInfo, whose
    /// first five bits are the audio object type.
    private static func audioObjectType(_ bytes: [UInt8], from start: Int) -> Int? {
        var offset = start
        func descriptor() -> (tag: UInt8, body: Int, length: Int)? {
            guard offset < bytes.count else { return nil }
            let tag = bytes[offset]
            offset += 1
            var length = 0
            for _ in 0..<4 {
                guard offset < bytes.count else { return nil }
                let byte = bytes[offset]
                offset += 1
                length = length << 7 | Int(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            return (tag, offset, length)
        }
        guard let es = descriptor(), es.tag == 0x03, es.body + 3 <= bytes.count else { return nil }
        let flags = bytes[es.body + 2]
        offset = es.body + 3
        if flags & 0x80 != 0 { offset += 2 }  // dependsOn_ES_ID
        if flags & 0x40 != 0, offset < bytes.count { offset += 1 + Int(bytes[offset]) }  // URL
        if flags & 0x20 != 0 { offset += 2 }  // OCR_ES_Id
        guard let config = descriptor(), config.tag == 0x04 else { return nil }
        offset = config.body + 13  // objectTypeIndication, streamType, bufferSizeDB, maxBitrate, avgBitrate
        guard let specific = descriptor(), specific.tag == 0x05, specific.body < bytes.count else { return nil }
        let type = Int(bytes[specific.body] >> 3)
        if type == 31, specific.body + 1 < bytes.count {  // escape: 32 + the next six bits
            return 32 + Int((bytes[specific.body] & 0x07) << 3 | bytes[specific.body + 1] >> 5)
        }
        return type
    }
}

/// The top-level manifests of a package: the HLS master playlist and the DASH manifest, both over the same
/// CMAF segments.
enum PackageManifests {
    /// The master playlist: every video rendition (largest first) with the audio rendition as its group.
    static func masterPlaylist(video: [RenditionFacts], audio: RenditionFacts?) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        if let audio {
            lines.append(
                "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"audio\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"\(audio.channels)\",URI=\"\(audio.playlist)\""
            )
        }
        for rendition in video.sorted(by: { $0.peakBitRate > $1.peakBitRate }) {
            var attributes = [
                "BANDWIDTH=\(rendition.peakBitRate + (audio?.peakBitRate ?? 0))",
                "AVERAGE-BANDWIDTH=\(rendition.averageBitRate + (audio?.averageBitRate ?? 0))",
                "CODECS=\"\(([rendition.codecs] + (audio.map { [$0.codecs] } ?? [])).joined(separator: ","))\"",
                "RESOLUTION=\(rendition.width)x\(rendition.height)",
                "FRAME-RATE=\(String(format: "%.3f", rendition.frameRate))",
            ]
            if audio != nil { attributes.append("AUDIO=\"audio\"") }
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append(rendition.playlist)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A static DASH manifest (live profile: a segment template with a timeline in milliseconds) over the same
    /// initialisation and media segments.
    static func dashManifest(video: [RenditionFacts], audio: RenditionFacts?, duration: Double) -> String {
        var lines = [
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
            "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" profiles=\"urn:mpeg:dash:profile:isoff-live:2011\" type=\"static\" mediaPresentationDuration=\"\(isoDuration(duration))\" minBufferTime=\"PT2S\">",
            "  <Period id=\"0\" start=\"PT0S\">",
        ]
        if !video.isEmpty {
            lines.append(
                "    <AdaptationSet id=\"0\" contentType=\"video\" mimeType=\"video/mp4\" segmentAlignment=\"true\" startWithSAP=\"1\">"
            )
            for rendition in video.sorted(by: { $0.peakBitRate > $1.peakBitRate }) {
                lines.append(
                    "      <Representation id=\"\(xml(rendition.name))\" bandwidth=\"\(rendition.peakBitRate)\" codecs=\"\(rendition.codecs)\" width=\"\(rendition.width)\" height=\"\(rendition.height)\" frameRate=\"\(dashFrameRate(rendition.frameRate))\" sar=\"1:1\">"
                )
                lines += template(rendition)
                lines.append("      </Representation>")
            }
            lines.append("    </AdaptationSet>")
        }
        if let audio {
            lines.append(
                "    <AdaptationSet id=\"1\" contentType=\"audio\" mimeType=\"audio/mp4\" segmentAlignment=\"true\" startWithSAP=\"1\">"
            )
            lines.append(
                "      <Representation id=\"\(xml(audio.name))\" bandwidth=\"\(audio.peakBitRate)\" codecs=\"\(audio.codecs)\" audioSamplingRate=\"\(audio.sampleRate)\">"
            )
            lines.append(
                "        <AudioChannelConfiguration schemeIdUri=\"urn:mpeg:dash:23003:3:audio_channel_configuration:2011\" value=\"\(audio.channels)\"/>"
            )
            lines += template(audio)
            lines.append("      </Representation>")
            lines.append("    </AdaptationSet>")
        }
        lines += ["  </Period>", "</MPD>"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The segment template of a rendition: its files by number, their times from the media playlist.
    private static func template(_ rendition: RenditionFacts) -> [String] {
        let folder = xml(rendition.name)
        var lines = [
            "        <SegmentTemplate timescale=\"1000\" initialization=\"\(folder)/init.mp4\" media=\"\(folder)/seg_$Number%05d$.m4s\" startNumber=\"0\">",
            "          <SegmentTimeline>",
        ]
        var start = 0.0
        for duration in rendition.segmentDurations {
            let from = Int64((start * 1000).rounded())
            let to = Int64(((start + duration) * 1000).rounded())
            lines.append("            <S t=\"\(from)\" d=\"\(to - from)\"/>")
            start += duration
        }
        lines += ["          </SegmentTimeline>", "        </SegmentTemplate>"]
        return lines
    }

    /// A frame rate as DASH writes it: an integer or a fraction (`30000/1001`, `25000/2000`), never a decimal.
    static func dashFrameRate(_ fps: Double) -> String {
        let whole = fps.rounded()
        if abs(fps - whole) < 0.0005 { return String(Int(whole)) }
        let ntsc = fps * 1.001
        if abs(ntsc - ntsc.rounded()) < 0.001 { return "\(Int(ntsc.rounded()) * 1000)/1001" }
        return "\(Int((fps * 1000).rounded()))/1000"
    }

    private static func isoDuration(_ seconds: Double) -> String {
        "PT" + String(format: "%.3f", seconds) + "S"
    }

    private static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;")
    }
}
