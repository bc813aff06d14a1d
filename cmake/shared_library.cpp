// The shared library's own translation unit. CMake needs at least one
// source per library; all of lanejit comes in whole from the static
// library's position-independent objects (cmake/install.cmake).
namespace lanejit::detail {
extern const char kSharedLibrary[];
const char kSharedLibrary[] = "lanejit";
} // namespace lanejit::detail
