import Foundation
import QuadCore
import QuadPlatform

/// Student Kier (305491) with the seed's classes spread over the week, at Clayton, in Melbourne time;
/// the semester is placed so that this week is teaching week 8 (after a mid-semester break). The shuttles come from a
/// GTFS feed: Clayton to Caulfield every 20 minutes from 06:00 (by the halls), Clayton to the CBD every 30 from 06:15,
/// Caulfield to Clayton every 20 from 06:10, to 23:45; Kier's stop is Clayton's bus loop.
enum TimetableDemo {
    static let campusAddress = "13 College Walk, Clayton"

    static func load(_ store: TimetableStore, now: Date) async throws {
        let zone = TimeZone(identifier: "Australia/Melbourne") ?? .gmt
        let thisMonday = CampusClock(timeZone: zone).date(of: now).monday
        let breakMonday = thisMonday.adding(days: -14)
        try await store.setCampus(
            CampusSettings(
                name: "Clayton", timeZone: zone, semesterStart: thisMonday.adding(days: -56), teachingWeeks: 12,
                breaks: [
                    TeachingBreak(name: "Mid-semester break", start: breakMonday, end: breakMonday.adding(days: 6))
                ]))
        try await store.setSimulated(true)
        try await store.saveCourse(code: "FIT1031", title: "Computers and networks")
        try await store.saveCourse(code: "FIT1032", title: "Introduction to programming")
        let classes: [(String, String, String, String, Int, String, String, String)] = [
            ("FIT1031", "Lecture 01", "Arun", "S4", 1, "10:00", "12:00", "1-12"),
            ("FIT1031", "Lab 01", "Arun", "S4", 2, "12:30", "13:30", "2-12"),
            ("FIT1031", "Workshop 01", "Arun", "S4", 3, "15:00", "16:30", "1-12"),
            ("FIT1032", "Lecture 01", "David", "S2", 4, "17:00", "18:00", "1-12"),
        ]
        try await store.saveStudent(id: "305491", name: "Kier")
        for (course, name, lecturer, room, weekday, start, end, weeks) in classes {
            let item = try TimetableInput.timetableClass(
                id: nil, course: course, name: name, lecturer: lecturer, room: room, campus: campusAddress,
                weekday: String(weekday), start: start, end: end, weeks: weeks)
            try await store.saveClass(item)
            try await store.enrol(student: "305491", classId: item.id)
        }
        try await store.saveCarPark(id: "clayton", name: "Clayton", capacity: 800)
        try await store.saveCarPark(id: "caulfield", name: "Caulfield", capacity: 300)
        _ = try await store.setFree("clayton", free: 645, at: now)
        _ = try await store.setFree("caulfield", free: 10, at: now)
        try await store.setGTFS(try shuttle())
        // Kier takes the shuttle from the bus loop: its buses are listed first.
        _ = try await store.setStops(student: "305491", stops: ["clayton"])
    }

    /// The demo's shuttles, as their operator would publish them: a GTFS feed shipped with Quad (`DemoFeed/`, written
    /// by `scripts/demo-gtfs`), read by the same code as an admin's upload.
    static func shuttle() throws -> GTFSSchedule {
        guard let url = Bundle.module.url(forResource: "shuttle", withExtension: "zip", subdirectory: "DemoFeed") else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try GTFSFeedFile.schedule(zip: try Data(contentsOf: url))
    }
}
