/// Look up the weather.
#[derive(toolloop::Tool)]
#[tool(name = "look_up_the_weather_for_a_city_and_report_it_back_in_great_detail_please")]
struct Weather {
    city: String,
}

fn main() {}
