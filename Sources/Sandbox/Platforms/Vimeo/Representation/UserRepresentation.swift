import StageKit

/// The JSON of `GET /me`: the sandbox's one user and its upload quota.
///
/// The quota is a lifetime quota (`showing: "lifetime"`): creating a video reserves its size and
/// deleting it frees the space again. Vimeo also has periodic (weekly) quotas; the sandbox does not.
enum UserRepresentation {
    static func render(quotaMax: Int64, used: Int64) -> JSONValue {
        [
            "uri": "/users/1",
            "name": "Sandbox User",
            "link": "https://vimeo.com/user1",
            "account": "pro",
            "upload_quota": [
                "space": [
                    "free": .integer(max(0, quotaMax - used)),
                    "max": .integer(quotaMax),
                    "used": .integer(used),
                    "showing": "lifetime",
                ],
                "lifetime": [
                    "free": .integer(max(0, quotaMax - used)),
                    "max": .integer(quotaMax),
                    "used": .integer(used),
                ],
                "periodic": [
                    "free": .null,
                    "max": .null,
                    "used": .integer(0),
                    "reset_date": .null,
                ],
            ],
        ]
    }
}
