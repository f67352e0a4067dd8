// Placeholder translation unit for io/ until the first reader lands.
namespace kcla::detail {
int io_translation_unit_anchor = 0;
}
