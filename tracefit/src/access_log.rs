//! Amazon S3 server access log records (format in `docs/stores.md`).
//!
//! One record a line, space-separated; `[...]` and `"..."` fields may hold spaces; any field may
//! be `-`. The parser reads fields 1-15 (through Turn-Around Time) and checks that every later
//! field is well formed (a quote or bracket left open means a cut line), but ignores their
//! values, so records with trailing fields newer than this parser are accepted.

use crate::error::LineError;
use crate::record::{Operation, ServedBy, TraceRecord};

/// Field names in order (1-based numbering in messages), as AWS documents them.
const FIELD_NAMES: [&str; 26] = [
    "Bucket Owner",
    "Bucket",
    "Time",
    "Remote IP",
    "Requester",
    "Request ID",
    "Operation",
    "Key",
    "Request-URI",
    "HTTP status",
    "Error Code",
    "Bytes Sent",
    "Object Size",
    "Total Time",
    "Turn-Around Time",
    "Referer",
    "User-Agent",
    "Version Id",
    "Host Id",
    "Signature Version",
    "Cipher Suite",
    "Authentication Type",
    "Host Header",
    "TLS version",
    "Access Point ARN",
    "aclRequired",
];

/// Fields the parser needs: 1 through 15 (Turn-Around Time).
const NEEDED_FIELDS: usize = 15;

fn field_name(index0: usize) -> &'static str {
    FIELD_NAMES.get(index0).copied().unwrap_or("trailing field")
}

/// Splits a record into fields; brackets and quotes are stripped. Inside quotes, a backslash
/// escapes the next character (S3 escapes quotes in user agents that way).
pub fn split_fields(line: &str) -> Result<Vec<&str>, LineError> {
    let bytes = line.as_bytes();
    let mut fields = Vec::with_capacity(26);
    let mut i = 0;
    while i < bytes.len() {
        // Skip separators (one space normally; be lenient about runs and tabs).
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let open = bytes[i];
        let index0 = fields.len();
        if open == b'[' || open == b'"' {
            let close = if open == b'[' { b']' } else { b'"' };
            let start = i + 1;
            let mut j = start;
            let mut found = None;
            while j < bytes.len() {
                if open == b'"' && bytes[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if bytes[j] == close {
                    found = Some(j);
                    break;
                }
                j += 1;
            }
            let Some(end) = found else {
                return Err(LineError::Unterminated {
                    field: index0 + 1,
                    name: field_name(index0),
                    open: open as char,
                    close: close as char,
                });
            };
            // `start` and `end` sit next to ASCII delimiters, so they are char boundaries.
            fields.push(line.get(start..end).unwrap_or(""));
            i = end + 1;
            // Anything glued to the closing delimiter up to the next space is dropped.
            while i < bytes.len() && bytes[i] != b' ' && bytes[i] != b'\t' {
                i += 1;
            }
        } else {
            let start = i;
            while i < bytes.len() && bytes[i] != b' ' && bytes[i] != b'\t' {
                i += 1;
            }
            fields.push(line.get(start..i).unwrap_or(""));
        }
    }
    Ok(fields)
}

fn bad(index0: usize, value: &str, expected: &'static str) -> LineError {
    // Long garbage is cut so that a report stays readable.
    let mut shown: String = value.chars().take(60).collect();
    if shown.len() < value.len() {
        shown.push_str("...");
    }
    LineError::BadField {
        field: index0 + 1,
        name: field_name(index0),
        value: shown,
        expected,
    }
}

fn opt_u64(
    fields: &[&str],
    index0: usize,
    expected: &'static str,
) -> Result<Option<u64>, LineError> {
    let value = fields.get(index0).copied().unwrap_or("-");
    if value == "-" {
        return Ok(None);
    }
    value
        .parse::<u64>()
        .map(Some)
        .map_err(|_| bad(index0, value, expected))
}

fn ms_to_ns(ms: Option<u64>, index0: usize, value: &str) -> Result<Option<u64>, LineError> {
    match ms {
        None => Ok(None),
        Some(ms) => ms
            .checked_mul(1_000_000)
            .map(Some)
            .ok_or_else(|| bad(index0, value, "milliseconds below 1.8e13")),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days in `month` (1-12) of `year`, Gregorian.
fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `06/Feb/2019:00:00:38 +0000` (brackets already stripped) into Unix seconds.
pub fn parse_time(value: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (stamp, zone) = value.split_once(' ')?;
    let mut parts = stamp.splitn(3, '/');
    let day: i64 = parts.next()?.parse().ok()?;
    let month_name = parts.next()?;
    let rest = parts.next()?;
    let month = MONTHS.iter().position(|m| *m == month_name)? as i64 + 1;
    let mut hms = rest.split(':');
    let year: i64 = hms.next()?.parse().ok()?;
    let hour: i64 = hms.next()?.parse().ok()?;
    let minute: i64 = hms.next()?.parse().ok()?;
    let second: i64 = hms.next()?.parse().ok()?;
    if hms.next().is_some()
        || !(1..=31).contains(&day)
        || !(1970..=9999).contains(&year)
        || hour > 23
        || minute > 59
        || second > 60
        || hour < 0
        || minute < 0
        || second < 0
    {
        return None;
    }
    let zone = zone.trim();
    if zone.len() != 5 || !zone.is_char_boundary(1) || !zone.is_char_boundary(3) {
        return None;
    }
    let sign = match zone.get(0..1)? {
        "+" => 1,
        "-" => -1,
        _ => return None,
    };
    let zh: i64 = zone.get(1..3)?.parse().ok()?;
    let zm: i64 = zone.get(3..5)?.parse().ok()?;
    // Real offsets lie within -12:00..+14:00; a day past its month's end (31/Feb) is no date.
    if !(0..=14).contains(&zh) || !(0..=59).contains(&zm) || day > days_in_month(year, month) {
        return None;
    }
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    let utc = local - sign * (zh * 3600 + zm * 60);
    u64::try_from(utc).ok()
}

/// Parses one access-log record. `line_no` is 1-based and copied into the record.
pub fn parse_line(line: &str, line_no: u64) -> Result<TraceRecord, LineError> {
    let fields = split_fields(line)?;
    if fields.len() < NEEDED_FIELDS {
        return Err(LineError::TooFewFields {
            found: fields.len(),
            needed: NEEDED_FIELDS,
            missing: field_name(NEEDED_FIELDS - 1),
        });
    }
    let get = |i: usize| fields.get(i).copied().unwrap_or("-");
    let time = get(2);
    let start_s =
        parse_time(time).ok_or_else(|| bad(2, time, "a time like `06/Feb/2019:00:00:38 +0000`"))?;
    // Nanoseconds since 1970 fit 64 bits until 2554; every later time was read as u64::MAX.
    let start_ns = start_s
        .checked_mul(1_000_000_000)
        .ok_or_else(|| bad(2, time, "a time before the year 2554"))?;
    let status_text = get(9);
    let status: u16 = match status_text.parse::<u16>() {
        Ok(s) if (100..=599).contains(&s) => s,
        _ => return Err(bad(9, status_text, "an HTTP status (100-599)")),
    };
    // S3 writes `-` for zero bytes sent. Sizes are bounded by S3's largest object.
    const SIZE: &str = "a byte count up to 5 TiB (S3's largest object) or `-`";
    let bytes = opt_u64(&fields, 11, SIZE)?.unwrap_or(0);
    let object_size_bytes = opt_u64(&fields, 12, SIZE)?;
    if bytes > limits::MAX_OBJECT_BYTES {
        return Err(bad(11, get(11), SIZE));
    }
    if let Some(o) = object_size_bytes {
        if o > limits::MAX_OBJECT_BYTES {
            return Err(bad(12, get(12), SIZE));
        }
        // Only a successful body is part of the object: an error response (a 416 on a tiny
        // object, say) may send more bytes than the object has.
        if (200..300).contains(&status) && bytes > o {
            return Err(LineError::Inconsistent {
                what: format!("Bytes Sent ({bytes}) exceeds Object Size ({o})"),
            });
        }
    }
    let total_ms = opt_u64(&fields, 13, "milliseconds or `-`")?;
    let tat_ms = opt_u64(&fields, 14, "milliseconds or `-`")?;
    if let (Some(total), Some(tat)) = (total_ms, tat_ms) {
        // Turn-around is part of the total: the first byte cannot come after the last.
        if tat > total {
            return Err(LineError::Inconsistent {
                what: format!(
                    "Turn-Around Time ({tat} ms) exceeds Total Time ({total} ms); times are out of order"
                ),
            });
        }
    }
    let total_ns = ms_to_ns(total_ms, 13, get(13))?;
    let first_byte_latency_ns = ms_to_ns(tat_ms, 14, get(14))?;
    let key = get(7);
    Ok(TraceRecord {
        line: line_no,
        start_ns,
        first_byte_latency_ns,
        total_ns,
        bytes,
        object_size_bytes,
        object: if key == "-" {
            String::new()
        } else {
            key.to_string()
        },
        offset_bytes: None,
        status,
        operation: Operation::from_s3(get(6)),
        served_by: ServedBy::Store,
        sim: None,
        needed: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example record of `docs/stores.md` (AWS's documentation of the format).
    const EXAMPLE: &str = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be awsexamplebucket1 [06/Feb/2019:00:00:38 +0000] 192.0.2.3 79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be 3E57427F3EXAMPLE REST.GET.VERSIONING - \"GET /awsexamplebucket1?versioning HTTP/1.1\" 200 - 113 - 7 - \"-\" \"S3Console/0.4\" - s9lzHYrFp76ZVxRcpX9+5cjAnEH2ROuNkd2BHfIa6UkFVdtjf5mKR3/eTPFvsiP/XV/VLi31234= SigV2 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader awsexamplebucket1.s3.us-west-1.amazonaws.com TLSV1.2 arn:aws:s3:us-west-1:123456789012:accesspoint/example-AP Yes";

    fn ranged(total: &str, tat: &str, ua: &str, tail: &str) -> String {
        format!(
            "owner bkt [10/Mar/2024:12:34:56 +0000] 10.0.0.1 arn:aws:iam::1:user/u REQID REST.GET.OBJECT data/part-0001.parquet \"GET /bkt/data/part-0001.parquet HTTP/1.1\" 206 - 65536 2097152 {total} {tat} \"-\" \"{ua}\" - HOSTID SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader bkt.s3.us-east-1.amazonaws.com TLSv1.3 - -{tail}"
        )
    }

    #[test]
    fn example_record_splits_field_by_field() {
        let f = split_fields(EXAMPLE).unwrap();
        assert_eq!(f.len(), 26);
        assert_eq!(
            f[0],
            "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"
        );
        assert_eq!(f[1], "awsexamplebucket1");
        assert_eq!(f[2], "06/Feb/2019:00:00:38 +0000");
        assert_eq!(f[3], "192.0.2.3");
        assert_eq!(f[5], "3E57427F3EXAMPLE");
        assert_eq!(f[6], "REST.GET.VERSIONING");
        assert_eq!(f[7], "-");
        assert_eq!(f[8], "GET /awsexamplebucket1?versioning HTTP/1.1");
        assert_eq!(f[9], "200");
        assert_eq!(f[10], "-");
        assert_eq!(f[11], "113");
        assert_eq!(f[12], "-");
        assert_eq!(f[13], "7");
        assert_eq!(f[14], "-");
        assert_eq!(f[15], "-");
        assert_eq!(f[16], "S3Console/0.4");
        assert_eq!(f[17], "-");
        assert_eq!(f[19], "SigV2");
        assert_eq!(f[20], "ECDHE-RSA-AES128-GCM-SHA256");
        assert_eq!(f[21], "AuthHeader");
        assert_eq!(f[22], "awsexamplebucket1.s3.us-west-1.amazonaws.com");
        assert_eq!(f[23], "TLSV1.2");
        assert_eq!(
            f[24],
            "arn:aws:s3:us-west-1:123456789012:accesspoint/example-AP"
        );
        assert_eq!(f[25], "Yes");
    }

    #[test]
    fn example_record_parses_as_documented() {
        let r = parse_line(EXAMPLE, 1).unwrap();
        // 2019-02-06T00:00:38Z
        assert_eq!(r.start_ns, 1_549_411_238 * 1_000_000_000);
        assert_eq!(r.operation, Operation::Other("REST.GET.VERSIONING".into()));
        assert_eq!(r.object, "");
        assert_eq!(r.status, 200);
        assert_eq!(r.bytes, 113);
        assert_eq!(r.object_size_bytes, None);
        assert_eq!(r.total_ns, Some(7_000_000));
        assert_eq!(r.first_byte_latency_ns, None);
        assert_eq!(r.offset_bytes, None);
        assert!(!r.is_store_read(), "a versioning GET is not an object read");
    }

    #[test]
    fn ranged_get_from_stores_md() {
        let r = parse_line(
            &ranged(
                "62",
                "59",
                "aws-sdk-cpp/1.11 Linux/6.1 x86_64 ClickHouse",
                "",
            ),
            3,
        )
        .unwrap();
        assert_eq!(r.line, 3);
        assert_eq!(r.status, 206);
        assert_eq!(r.bytes, 65536);
        assert_eq!(r.object_size_bytes, Some(2_097_152));
        assert_eq!(r.total_ns, Some(62_000_000));
        assert_eq!(r.first_byte_latency_ns, Some(59_000_000));
        assert_eq!(r.transfer_ns(), Some(3_000_000));
        assert_eq!(r.object, "data/part-0001.parquet");
        assert!(r.is_store_read());
    }

    #[test]
    fn extra_trailing_fields_are_ignored() {
        let plain = parse_line(&ranged("62", "59", "ua", ""), 1).unwrap();
        let extra = parse_line(
            &ranged("62", "59", "ua", " us-east-1 \"something new\" [x y] 42"),
            1,
        )
        .unwrap();
        assert_eq!(plain, extra);
    }

    #[test]
    fn quoted_user_agent_with_spaces_and_escaped_quote() {
        let line = ranged(
            "62",
            "59",
            "Mozilla/5.0 (X11; Linux) \\\"quoted\\\" thing",
            "",
        );
        let f = split_fields(&line).unwrap();
        assert_eq!(f[16], "Mozilla/5.0 (X11; Linux) \\\"quoted\\\" thing");
        assert_eq!(f[17], "-");
        assert_eq!(f.len(), 26);
        assert!(parse_line(&line, 1).is_ok());
    }

    #[test]
    fn dash_fields_are_absent_values() {
        let r = parse_line(&ranged("-", "-", "-", ""), 1).unwrap();
        assert_eq!(r.total_ns, None);
        assert_eq!(r.first_byte_latency_ns, None);
        assert_eq!(r.transfer_ns(), None);
    }

    #[test]
    fn truncated_lines_are_refused_with_a_reason() {
        let full = ranged("62", "59", "some agent", "");
        // Cut inside the time bracket, before the needed fields, and inside the user agent.
        let cut_time = &full[..20];
        assert!(matches!(
            parse_line(cut_time, 1),
            Err(LineError::Unterminated { field: 3, .. })
        ));
        let idx = full.find(" 65536").unwrap();
        assert!(matches!(
            parse_line(&full[..idx], 1),
            Err(LineError::TooFewFields { found: 11, .. })
        ));
        let ua = full.find("some agent").unwrap() + 4;
        assert!(matches!(
            parse_line(&full[..ua], 1),
            Err(LineError::Unterminated { field: 17, .. })
        ));
        assert!(matches!(
            parse_line("", 1),
            Err(LineError::TooFewFields { found: 0, .. })
        ));
    }

    #[test]
    fn bad_values_name_the_field() {
        let line = ranged("6x2", "59", "ua", "");
        match parse_line(&line, 1) {
            Err(LineError::BadField {
                field: 14,
                name: "Total Time",
                ..
            }) => {}
            other => panic!("expected a bad Total Time, got {other:?}"),
        }
        let line = line.replace(" 206 ", " 2060 ").replace("6x2", "62");
        assert!(matches!(
            parse_line(&line, 1),
            Err(LineError::BadField { field: 10, .. })
        ));
    }

    #[test]
    fn time_zones_and_dates() {
        assert_eq!(parse_time("01/Jan/1970:00:00:00 +0000"), Some(0));
        assert_eq!(parse_time("01/Jan/1970:01:00:00 +0100"), Some(0));
        assert_eq!(
            parse_time("29/Feb/2024:23:59:59 -0130"),
            Some(1_709_251_199 + 5400)
        );
        assert_eq!(parse_time("06/Foo/2019:00:00:38 +0000"), None);
        assert_eq!(parse_time("06/Feb/2019:25:00:38 +0000"), None);
        assert_eq!(parse_time("06/Feb/2019:00:00:38"), None);
        assert_eq!(parse_time("06/Feb/2019:00:00:38 +é000"), None);
        // No such day, no such zone.
        assert_eq!(parse_time("31/Feb/2026:00:00:00 +0000"), None);
        assert_eq!(parse_time("29/Feb/2023:00:00:00 +0000"), None);
        assert_eq!(parse_time("31/Apr/2026:00:00:00 +0000"), None);
        assert_eq!(parse_time("06/Feb/2019:00:00:38 +9999"), None);
        assert_eq!(parse_time("06/Feb/2019:00:00:38 -2400"), None);
        assert!(parse_time("06/Feb/2019:00:00:38 +1400").is_some());
    }

    /// A size past S3's largest object, bytes past the object's size, and a first byte after
    /// the last were accepted and fitted.
    #[test]
    fn impossible_sizes_and_times_are_refused() {
        let err = |line: &str| parse_line(line, 7).unwrap_err().to_string();
        let huge = ranged("62", "59", "ua", "")
            .replace(" 65536 2097152 ", " 18446744073709551615 2097152 ");
        assert!(
            err(&huge).contains("Bytes Sent") && err(&huge).contains("5 TiB"),
            "{}",
            err(&huge)
        );
        let over = ranged("62", "59", "ua", "").replace(" 65536 2097152 ", " 3000000 2097152 ");
        assert!(err(&over).contains("exceeds Object Size"), "{}", err(&over));
        // An error body may be larger than the object (a 416 on a 100-byte object).
        let error_body = ranged("62", "59", "ua", "")
            .replace(" 206 - 65536 2097152 ", " 416 InvalidRange 300 100 ");
        assert!(parse_line(&error_body, 7).is_ok(), "{}", err(&error_body));
        let late = ranged("10", "50", "ua", "");
        assert!(err(&late).contains("exceeds Total Time"), "{}", err(&late));
        assert!(parse_line(&ranged("62", "59", "ua", ""), 7).is_ok());
    }

    /// Past 2554, nanoseconds since 1970 overflow 64 bits: such a time was read as u64::MAX,
    /// so a log of the years 3000 and 9000 was "3 GETs over 1.000 s".
    #[test]
    fn a_time_past_2554_is_refused_not_saturated() {
        let at = |date: &str| ranged("62", "59", "ua", "").replace("10/Mar/2024", date);
        let last_ok = parse_line(&at("21/Jul/2554"), 7).unwrap();
        assert_eq!(last_ok.start_ns, 18_446_704_496 * 1_000_000_000);
        for date in ["10/Mar/3000", "31/Dec/9999", "01/Jan/2555"] {
            let e = parse_line(&at(date), 7).unwrap_err().to_string();
            assert!(
                e.contains("Time") && e.contains("before the year 2554"),
                "{e}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_safe(s in ".*") {
            let _ = parse_line(&s, 1);
        }

        #[test]
        fn mutated_records_never_panic(cut in 0usize..400, insert in ".{0,8}") {
            let mut line = ranged("62", "59", "ua x", " extra");
            let at = cut.min(line.len());
            if line.is_char_boundary(at) {
                line.insert_str(at, &insert);
            }
            let _ = parse_line(&line, 1);
        }
    }
}
