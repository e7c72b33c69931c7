import CSV
import Foundation
import QuadCore
import ZIPFoundation

/// A GTFS feed as operators publish it: a ZIP of CSV files. Unpacks the files Quad reads (ZIPFoundation) and reads
/// them (CSV.swift) into the tables `GTFSSchedule` checks; every other file (shapes, fares…) is left packed.
enum GTFSFeedFile {
    static let files = [
        "agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt", "calendar.txt", "calendar_dates.txt",
    ]
    /// The most a file may hold unpacked: a ZIP of a few MiB can unpack to gigabytes.
    static let maximumUnpacked = 64 * 1024 * 1024

    static func schedule(zip data: Data) throws(ValidationFailure) -> GTFSSchedule {
        try GTFSSchedule(tables: tables(zip: data))
    }

    static func tables(zip data: Data) throws(ValidationFailure) -> [String: GTFSSchedule.Table] {
        let archive: Archive
        do {
            archive = try Archive(data: data, accessMode: .read)
        } catch {
            throw ValidationFailure(field: "file", message: "This is not a ZIP file: send the GTFS feed as published.")
        }
        var tables: [String: GTFSSchedule.Table] = [:]
        // The files are at the ZIP's top level, as the spec has them.
        for entry in archive where entry.type == .file && files.contains(entry.path) {
            guard entry.uncompressedSize <= maximumUnpacked else { throw tooLarge(entry.path) }
            var bytes = Data()
            do {
                _ = try archive.extract(entry, skipCRC32: false) { chunk in
                    // The size in the ZIP's directory may lie: counted as it unpacks.
                    guard bytes.count + chunk.count <= maximumUnpacked else { throw Unpacked.tooLarge }
                    bytes.append(chunk)
                }
            } catch Unpacked.tooLarge {
                throw tooLarge(entry.path)
            } catch {
                throw ValidationFailure(field: entry.path, message: "This file of the ZIP cannot be unpacked.")
            }
            tables[entry.path] = try table(bytes, name: entry.path)
        }
        return tables
    }

    private enum Unpacked: Error { case tooLarge }

    private static func tooLarge(_ name: String) -> ValidationFailure {
        ValidationFailure(field: name, message: "\(name) unpacks to more than 64 MiB: Quad takes a campus's lines.")
    }

    /// A CSV file's rows as column → value (UTF-8, with or without a byte-order mark; cells trimmed, as feeds often
    /// pad them).
    static func table(_ bytes: Data, name: String) throws(ValidationFailure) -> GTFSSchedule.Table {
        guard var text = String(data: bytes, encoding: .utf8) else {
            throw ValidationFailure(field: name, message: "\(name) is not UTF-8 text.")
        }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        do {
            let reader = try CSVReader(string: text, hasHeaderRow: true)
            let header = (reader.headerRow ?? []).map { $0.trimmingCharacters(in: .whitespaces) }
            var rows: GTFSSchedule.Table = []
            while let row = reader.next() {
                // A blank line at the end is no record.
                if row.count == 1, row[0].isEmpty { continue }
                var record: [String: String] = [:]
                for (column, value) in zip(header, row) { record[column] = value.trimmingCharacters(in: .whitespaces) }
                rows.append(record)
            }
            if let error = reader.error { throw error }
            return rows
        } catch {
            throw ValidationFailure(field: name, message: "\(name) is not a CSV file Quad can read.")
        }
    }
}
